/**
 * MCP server definitions in the `.mcp.json` format (`{ "mcpServers": { name: {...} } }`), from
 * `.runtrail/mcp.json`, `~/.runtrail/mcp.json` or inline in an agent's frontmatter. `${VAR}` and
 * `${VAR:-default}` expand from the environment. Problems name the file, the field and the value; a
 * definition that cannot be used is still kept (with `unusable`) so a run that needs it fails clearly.
 */
import { pinPath } from '../sandbox/sandbox-paths.js';
import { AGENT_SANDBOX_SCHEMA, resolveSandboxPolicy, type AgentSandboxSettings, type SandboxPolicy } from '../sandbox/sandbox-policy.js';
import { isAbsolute, resolve } from 'node:path';
import { isPlausibleSecret, isSecretEnvName, registerSecret } from '../events/secret-masker.js';
import { minimalBaseEnv } from '../tools/exec-config.js';
import { checkSchema, formatSchemaPath, type JsonSchema } from '../tools/schema.js';
import { sanitizeToolPart } from './mcp-tool-name.js';

export const MCP_DEFAULTS = {
  timeout_s: 600,
  connect_timeout_s: 30,
  idle_timeout_s: 120,
  max_result_chars: 50_000,
} as const;

/** A problem of one definition: `file: field: message` (the extensions layer shows it as a DefinitionProblem). */
export interface McpConfigProblem {
  file: string;
  field?: string;
  message: string;
  level: 'error' | 'warning';
}

export type McpTransportConfig =
  | { type: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd: string; sandbox?: SandboxPolicy }
  | { type: 'http' | 'sse'; url: string; headers: Record<string, string> };

export interface McpServerOptions {
  /** Hard cap per call (timeout_s). */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** No answer and no progress for this long ends a call (idle_timeout_s). */
  idleTimeoutMs: number;
  /** Globs over the server's own tool names; empty = all. */
  include: string[];
  exclude: string[];
  maxResultChars: number;
}

export interface McpServerConfig {
  name: string;
  /** Where it is defined, as the user knows it (`.runtrail/mcp.json`, `~/.runtrail/mcp.json`, an agent file). */
  file: string;
  /** Expanded: holds secrets, so it is never logged or written anywhere. */
  transport: McpTransportConfig;
  options: McpServerOptions;
  /** What may be shown: the definition as written (before `${VAR}` expansion), env and header names only. */
  shown: Record<string, unknown>;
  /** Why it cannot be started (e.g. a variable that is not set); a run that needs it fails with this. */
  unusable?: string;
}

const stringList = { type: 'array', items: { type: 'string', minLength: 1 } };
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };

const SERVER_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    type: { enum: ['stdio', 'http', 'sse', 'streamable-http', 'streamableHttp'] },
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
    env: stringMap,
    cwd: { type: 'string', minLength: 1 },
    url: { type: 'string', minLength: 1 },
    headers: stringMap,
    timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 86400 },
    connect_timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
    idle_timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 86400 },
    include: stringList,
    exclude: stringList,
    max_result_chars: { type: 'integer', minimum: 1000, maximum: 100_000_000 },
    /** A stdio server in the sandbox: true, or the sandbox's own read/write/network/env/limits. */
    sandbox: { anyOf: [{ type: 'boolean' }, AGENT_SANDBOX_SCHEMA] },
  },
};
const KNOWN_KEYS = new Set(Object.keys((SERVER_SCHEMA.properties as Record<string, unknown>) ?? {}));

interface RawServer {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  timeout_s?: number;
  connect_timeout_s?: number;
  idle_timeout_s?: number;
  include?: string[];
  exclude?: string[];
  max_result_chars?: number;
  sandbox?: boolean | AgentSandboxSettings;
}

export interface McpParseContext {
  /** The file as the user knows it. */
  file: string;
  /** Field path prefix of the servers in that file: `mcpServers` or `mcpServers[1]`. */
  at: string;
  env: Record<string, string | undefined>;
  /** Relative `cwd` resolves here (the project folder). */
  baseDir: string;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `${VAR}` / `${VAR:-default}` expanded; the names of unset variables without a default in `missing`;
 *  `onValue` is told each value put in (the caller may hold it secret). */
export function expandVars(
  text: string,
  env: Record<string, string | undefined>,
  missing: Set<string>,
  onValue?: (name: string, value: string) => void,
): string {
  return text.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    const value = v !== undefined && v !== '' ? v : fallback;
    if (value === undefined) {
      missing.add(name);
      return '';
    }
    onValue?.(name, value);
    return value;
  });
}

/** Header names whose values are credentials, whatever they hold. */
const SECRET_HEADER = /authorization|cookie|token|secret|key|password|signature/i;

/**
 * The values an MCP server is given that are secrets, registered with the masker (events/secret-masker.ts)
 * so that no event, file, log or model request shows them: every `${VAR}` expanded into its env, headers
 * or args (unless it is a path, a number or a plain URL), the value of an env entry named like a secret,
 * and the value of a credential header (and the token after its scheme).
 */
function registerServerSecrets(server: string, d: RawServer, env: Record<string, string | undefined>): void {
  const expanded = (name: string, value: string) => {
    if (isPlausibleSecret(value)) registerSecret(value, `${name} (MCP server ${server})`);
  };
  const missing = new Set<string>();
  for (const v of [...Object.values(d.env ?? {}), ...Object.values(d.headers ?? {}), ...(d.args ?? []), d.url ?? '']) expandVars(v, env, missing, expanded);
  for (const [k, v] of Object.entries(d.env ?? {})) if (isSecretEnvName(k)) registerSecret(expandVars(v, env, missing), `${k} (MCP server ${server})`);
  for (const [k, v] of Object.entries(d.headers ?? {})) {
    if (!SECRET_HEADER.test(k)) continue;
    const value = expandVars(v, env, missing);
    registerSecret(value, `${k} header (MCP server ${server})`);
    const scheme = /^\s*[A-Za-z]+\s+(\S+)\s*$/.exec(value);
    if (scheme) registerSecret(scheme[1], `${k} header (MCP server ${server})`);
  }
}

/** Parses one server definition; returns null (with problems) when it cannot be a server at all. */
export function parseServerDefinition(name: string, raw: unknown, ctx: McpParseContext, problems: McpConfigProblem[]): McpServerConfig | null {
  const at = `${ctx.at}.${name}`;
  const err = (field: string, message: string, level: McpConfigProblem['level'] = 'error') => problems.push({ file: ctx.file, field, message, level });
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
    err(at, `server name ${JSON.stringify(name)} must be 1-64 characters of letters, digits, "_", "-" or "."`);
    return null;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    err(at, `must be an object with "command" (stdio) or "url" (http), got ${JSON.stringify(raw)}`);
    return null;
  }
  const checked = checkSchema<RawServer>(SERVER_SCHEMA, raw);
  if (!checked.ok) {
    for (const i of checked.issues) err(i.path.length ? `${at}.${formatSchemaPath(i.path)}` : at, i.message);
    return null;
  }
  const d = checked.value;
  for (const k of Object.keys(raw)) if (!KNOWN_KEYS.has(k)) err(`${at}.${k}`, 'is not a known field; it is ignored', 'warning');
  const type = d.type === 'streamable-http' || d.type === 'streamableHttp' ? 'http' : (d.type ?? (d.url && !d.command ? 'http' : 'stdio'));
  registerServerSecrets(name, d, ctx.env);
  const missing = new Set<string>();
  const x = (s: string) => expandVars(s, ctx.env, missing);
  let transport: McpTransportConfig;
  let shown: Record<string, unknown>;
  if (type === 'stdio') {
    if (!d.command) {
      err(at, d.url ? 'has a "url" but "type" is "stdio": add "type": "http" or remove "url"' : 'needs "command" (a stdio server) or "url" (an http server)');
      return null;
    }
    if (d.url || d.headers) err(`${at}.${d.url ? 'url' : 'headers'}`, 'is for http servers; a stdio server ignores it', 'warning');
    const cwd = d.cwd ? x(d.cwd) : '.';
    // like the SDK's own stdio transport: a small safe base (PATH, HOME, …), then the definition's env
    const env: Record<string, string> = minimalBaseEnv(ctx.env);
    for (const [k, v] of Object.entries(d.env ?? {})) env[k] = x(v);
    transport = { type: 'stdio', command: x(d.command), args: (d.args ?? []).map(x), env, cwd: isAbsolute(cwd) ? cwd : resolve(ctx.baseDir, cwd) };
    // mcp.json is the operator's: what it says of a server's sandbox is the operator's grant, read/write relative to its folder
    if (d.sandbox) {
      const own = d.sandbox === true ? {} : d.sandbox;
      const rel = (p: string) => pinPath(p, ctx.baseDir);
      transport.sandbox = resolveSandboxPolicy({ ...own, read: own.read?.map(rel), write: own.write?.map(rel) }, undefined);
    }
    shown = {
      type,
      command: d.command,
      args: d.args ?? [],
      ...(d.cwd ? { cwd: d.cwd } : {}),
      env: Object.keys(d.env ?? {}),
      ...(d.sandbox ? { sandbox: d.sandbox } : {}),
    };
  } else {
    if (!d.url) {
      err(at, `a${type === 'http' ? 'n http' : ' sse'} server needs "url"`);
      return null;
    }
    if (d.command || d.args)
      err(`${at}.${d.command ? 'command' : 'args'}`, `is for stdio servers; a${type === 'http' ? 'n http' : ' sse'} server ignores it`, 'warning');
    const url = x(d.url);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(d.headers ?? {})) headers[k] = x(v);
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      parsed = null;
    }
    if (missing.size === 0 && (!parsed || !/^https?:$/.test(parsed.protocol))) {
      err(`${at}.url`, `must be an http:// or https:// URL, got ${JSON.stringify(d.url)}`);
      return null;
    }
    transport = { type: type as 'http' | 'sse', url, headers };
    shown = { type, url: shownUrl(d.url), headers: Object.keys(d.headers ?? {}) };
  }
  const secs = (v: number | undefined, def: number) => Math.round((v ?? def) * 1000);
  const options: McpServerOptions = {
    timeoutMs: secs(d.timeout_s, MCP_DEFAULTS.timeout_s),
    connectTimeoutMs: secs(d.connect_timeout_s, MCP_DEFAULTS.connect_timeout_s),
    idleTimeoutMs: secs(d.idle_timeout_s, MCP_DEFAULTS.idle_timeout_s),
    include: d.include ?? [],
    exclude: d.exclude ?? [],
    maxResultChars: d.max_result_chars ?? MCP_DEFAULTS.max_result_chars,
  };
  if (options.idleTimeoutMs > options.timeoutMs)
    err(`${at}.idle_timeout_s`, `is longer than timeout_s (${options.timeoutMs / 1000} s), which caps every call first`, 'warning');
  const cfg: McpServerConfig = { name, file: ctx.file, transport, options, shown: { ...shown, ...optionsShown(d) } };
  if (missing.size) {
    const names = [...missing].sort();
    cfg.unusable = `environment variable${names.length > 1 ? 's' : ''} ${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} not set (used in ${ctx.file} ${at})`;
    err(
      at,
      `uses ${names.map((n) => `\${${n}}`).join(', ')}, which ${names.length > 1 ? 'are' : 'is'} not set in the environment (write \${NAME:-default} for a default)`,
    );
  }
  return cfg;
}

/** A URL as it may be shown: no user:password, no query string (tokens travel there too). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//').replace(/\?.*$/, '?…');
  }
}

function optionsShown(d: RawServer): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of ['timeout_s', 'connect_timeout_s', 'idle_timeout_s', 'include', 'exclude', 'max_result_chars'] as const) if (d[k] !== undefined) o[k] = d[k];
  return o;
}

/** A whole mcp.json (already JSON-parsed). */
export function parseMcpConfig(raw: unknown, ctx: Omit<McpParseContext, 'at'>): { servers: McpServerConfig[]; problems: McpConfigProblem[] } {
  const problems: McpConfigProblem[] = [];
  const servers: McpServerConfig[] = [];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ file: ctx.file, message: 'must be a JSON object like { "mcpServers": { "name": { "command": "…" } } }', level: 'error' });
    return { servers, problems };
  }
  const obj = raw as Record<string, unknown>;
  for (const k of Object.keys(obj))
    if (k !== 'mcpServers')
      problems.push({ file: ctx.file, field: k, message: 'is not a known field (servers go under "mcpServers"); it is ignored', level: 'warning' });
  const map = obj.mcpServers;
  if (map === undefined) {
    problems.push({ file: ctx.file, field: 'mcpServers', message: 'is missing: the servers go under "mcpServers"', level: 'error' });
    return { servers, problems };
  }
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    problems.push({ file: ctx.file, field: 'mcpServers', message: `must be an object of servers by name, got ${JSON.stringify(map)}`, level: 'error' });
    return { servers, problems };
  }
  for (const [name, def] of Object.entries(map as Record<string, unknown>)) {
    const s = parseServerDefinition(name, def, { ...ctx, at: 'mcpServers' }, problems);
    if (s) servers.push(s);
  }
  clashingNames(servers, ctx.file, 'mcpServers', problems);
  return { servers, problems };
}

/** Two servers whose names become the same tool prefix (`my.docs`, `my_docs`) cannot both be used. */
export function clashingNames(servers: McpServerConfig[], file: string, at: string, problems: McpConfigProblem[]): void {
  const seen = new Map<string, string>();
  for (const s of servers) {
    const key = sanitizeToolPart(s.name);
    const had = seen.get(key);
    if (had !== undefined)
      problems.push({
        file,
        field: `${at}.${s.name}`,
        message: `its tools would be named mcp__${key}__… like those of server "${had}"; rename one of them`,
        level: 'error',
      });
    else seen.set(key, s.name);
  }
}

/** The whole transport, secrets included: the key runs of one process share a connection by. Held in memory only. */
export function connectionKey(t: McpTransportConfig): string {
  return JSON.stringify(
    t.type === 'stdio'
      ? [t.type, t.command, t.args, Object.entries(t.env).sort(), t.cwd, t.sandbox ?? null]
      : [t.type, t.url, Object.entries(t.headers).sort()],
  );
}
