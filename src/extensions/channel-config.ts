/**
 * `.runtrail/channels.json` (and `~/.runtrail/channels.json`): the chat channels to start, by name.
 * Each entry has Runtrail's keys (who may write, which agents) beside the channel's own (its token,
 * its API root), checked against the channel's schema; `${VAR}` and `${VAR:-default}` expand from the
 * environment. Problems name the file and the key, and never show a secret's value.
 */
import type { ChannelDefinition } from '../channels/channel-types.js';
import { expandVars } from '../mcp/mcp-config.js';
import { checkSchema, formatSchemaPath, type JsonSchema } from '../tools/schema.js';
import type { DefinitionProblem } from './definition-problem.js';

/** Runtrail's keys of a channel entry: what the IM layer and the channel host decide by. */
export interface ChannelPolicy {
  /** User ids (and, for groups, group ids) that may start runs and decide approvals. */
  allowFrom: string[];
  /** The agents this channel may start; absent: every agent. */
  agents?: string[];
  /** The agent plain text goes to (default `chat`). */
  defaultAgent: string;
  /** In a group, answer only when mentioned or replied to (default true). */
  requireMention: boolean;
}

export interface ConfiguredChannel {
  /** The key in channels.json. */
  name: string;
  /** The channel type (the definition's name). */
  type: string;
  /** The file it comes from, as the user knows it. */
  file: string;
  definition: ChannelDefinition;
  policy: ChannelPolicy;
  /** The channel's own keys, expanded. */
  config: Record<string, unknown>;
  /** The expanded values of its secret keys: masked wherever text about the channel is written. */
  secrets: string[];
  /** Why it cannot start (an unset variable, a bad key), when it cannot. */
  unusable?: string;
}

export const SHARED_CHANNEL_KEYS = ['type', 'enabled', 'allow_from', 'agents', 'default_agent', 'require_mention'] as const;

const SHARED_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', minLength: 1 },
    enabled: { type: 'boolean' },
    allow_from: { type: 'array', items: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer' }] } },
    agents: { type: 'array', items: { type: 'string', minLength: 1 } },
    default_agent: { type: 'string', minLength: 1 },
    require_mention: { type: 'boolean' },
  },
};

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const HAS_VAR = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/;

function expandDeep(v: unknown, env: Record<string, string | undefined>, missing: Set<string>): unknown {
  if (typeof v === 'string') return expandVars(v, env, missing);
  if (Array.isArray(v)) return v.map((x) => expandDeep(x, env, missing));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expandDeep(x, env, missing)]));
  return v;
}

export interface ChannelsParseContext {
  /** The file as the user knows it (`.runtrail/channels.json`). */
  file: string;
  env: Record<string, string | undefined>;
  /** The channel types known: builtins and code plugins' channels. */
  types: ReadonlyMap<string, ChannelDefinition>;
}

/** The channels of one channels.json; an entry with a problem is left out (disabled ones too), the others load. */
export function parseChannelsConfig(raw: unknown, ctx: ChannelsParseContext): { channels: ConfiguredChannel[]; problems: DefinitionProblem[] } {
  const problems: DefinitionProblem[] = [];
  const err = (field: string | undefined, message: string, level: DefinitionProblem['level'] = 'error') =>
    problems.push({ file: ctx.file, ...(field ? { field } : {}), message, level });
  const channels: ConfiguredChannel[] = [];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    err(
      undefined,
      `must be an object of channels by name ({ "telegram": { "token": "\${TELEGRAM_BOT_TOKEN}", … } }), got ${Array.isArray(raw) ? 'an array' : JSON.stringify(raw)}`,
    );
    return { channels, problems };
  }
  for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
    const c = parseEntry(name, entry, ctx, err);
    if (c) channels.push(c);
  }
  return { channels, problems };
}

function parseEntry(
  name: string,
  entry: unknown,
  ctx: ChannelsParseContext,
  err: (field: string | undefined, message: string, level?: DefinitionProblem['level']) => void,
): ConfiguredChannel | null {
  if (!NAME.test(name)) {
    err(name, 'a channel name must be 1–64 letters, digits, _ or -');
    return null;
  }
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
    err(name, `must be an object of the channel's settings, got ${JSON.stringify(entry)}`);
    return null;
  }
  const e = entry as Record<string, unknown>;
  const shared = checkSchema<Record<string, unknown>>(SHARED_SCHEMA, Object.fromEntries(SHARED_CHANNEL_KEYS.filter((k) => k in e).map((k) => [k, e[k]])));
  if (!shared.ok) {
    for (const i of shared.issues) err(`${name}.${formatSchemaPath(i.path)}`, i.message);
    return null;
  }
  const type = typeof e.type === 'string' ? e.type : name;
  const definition = ctx.types.get(type);
  if (!definition) {
    err(
      `${name}${typeof e.type === 'string' ? '.type' : ''}`,
      `unknown channel type "${type}" (known: ${[...ctx.types.keys()].sort().join(', ') || 'none'}); name the entry after its type or give "type"`,
    );
    return null;
  }
  if (e.enabled === false) return null;
  const secretKeys = definition.secretKeys ?? [];
  const own: Record<string, unknown> = Object.fromEntries(Object.entries(e).filter(([k]) => !(SHARED_CHANNEL_KEYS as readonly string[]).includes(k)));
  for (const k of secretKeys) {
    if (typeof own[k] === 'string' && own[k] !== '' && !HAS_VAR.test(own[k] as string)) {
      err(`${name}.${k}`, `holds a secret written into the file; write it as "\${VARIABLE}" and set the variable, so it stays out of the project`, 'warning');
    }
  }
  const config = expandDeep(own, ctx.env, new Set()) as Record<string, unknown>;
  let unusable: string | undefined;
  // keys whose variables are unset: their one problem is that, not what the empty value fails next
  const unset = new Set<string>();
  for (const [k, v] of Object.entries(own)) {
    const names = new Set<string>();
    expandDeep(v, ctx.env, names);
    if (!names.size) continue;
    unset.add(k);
    const shown = [...names].map((n) => `\${${n}}`).join(', ');
    err(`${name}.${k}`, `uses ${shown}, which ${names.size > 1 ? 'are' : 'is'} not set in the environment (write \${NAME:-default} for a default)`);
    unusable ??= `${shown} ${names.size > 1 ? 'are' : 'is'} not set in the environment`;
  }
  if (definition.configSchema) {
    const checked = checkSchema<Record<string, unknown>>(definition.configSchema, config);
    const issues = checked.ok
      ? []
      : checked.issues.filter((i) => !unset.has(String(i.path[0] ?? '')) && !(i.path.length === 0 && [...unset].some((k) => i.message.includes(k))));
    for (const i of issues) err(`${name}${i.path.length ? `.${formatSchemaPath(i.path)}` : ''}`, i.message);
    if (issues.length) unusable ??= 'its settings have errors (runtrail validate lists them)';
  }
  const allowFrom = ((e.allow_from as Array<string | number> | undefined) ?? []).map(String);
  if (!allowFrom.length)
    err(`${name}.allow_from`, 'is empty: everyone who writes to the bot is refused; list the user ids (and group ids) that may use it', 'warning');
  const secrets = secretKeys.map((k) => config[k]).filter((v): v is string => typeof v === 'string' && v.length >= 4);
  return {
    name,
    type,
    file: ctx.file,
    definition,
    policy: {
      allowFrom,
      ...(Array.isArray(e.agents) ? { agents: e.agents as string[] } : {}),
      defaultAgent: typeof e.default_agent === 'string' ? e.default_agent : 'chat',
      requireMention: e.require_mention !== false,
    },
    config,
    secrets,
    ...(unusable ? { unusable } : {}),
  };
}

/** The agents a channel names must exist: each unknown one is an error naming the key. */
export function channelAgentProblems(c: ConfiguredChannel, agentNames: readonly string[]): DefinitionProblem[] {
  const out: DefinitionProblem[] = [];
  const known = new Set(agentNames);
  const list = `(agents: ${[...agentNames].sort().join(', ')})`;
  c.policy.agents?.forEach((a, i) => {
    if (!known.has(a)) out.push({ file: c.file, field: `${c.name}.agents[${i}]`, message: `unknown agent "${a}" ${list}`, level: 'error' });
  });
  if (!known.has(c.policy.defaultAgent))
    out.push({ file: c.file, field: `${c.name}.default_agent`, message: `unknown agent "${c.policy.defaultAgent}" ${list}`, level: 'error' });
  else if (c.policy.agents && !c.policy.agents.includes(c.policy.defaultAgent)) {
    out.push({
      file: c.file,
      field: `${c.name}.default_agent`,
      message: `"${c.policy.defaultAgent}" is not among the channel's agents (${c.policy.agents.join(', ')}): plain text would be refused`,
      level: 'error',
    });
  }
  return out;
}
