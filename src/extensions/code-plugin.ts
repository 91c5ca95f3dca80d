/**
 * Loads a code plugin with jiti (TypeScript and ESM alike, no build step) and checks its default
 * export. A plugin that fails to import or exports nothing usable is a problem naming the file and
 * the error; a broken tool is refused alone, the plugin's other tools still load.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileJsonSchema, isZodSchema } from '../tools/schema.js';
import type { Agent } from '../runtime/agent.js';
import type { DefinitionProblem } from './definition-problem.js';
import type { PluginTool } from './define.js';
import type { ChannelDefinition } from '../channels/channel-types.js';

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface LoadedCodePlugin {
  name: string;
  version: string;
  /** As the user knows it (`.runtrail/plugins/x.ts`, or the package name). */
  display: string;
  tools: PluginTool[];
  // biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
  agents: Array<Agent<any>>; // any: each agent validates its own input
  channels: ChannelDefinition[];
}

export type CodePluginResult = { ok: true; plugin: LoadedCodePlugin; problems: DefinitionProblem[] } | { ok: false; problems: DefinitionProblem[] };

/** `runtrail` inside a plugin file is this package's plugin API (definePlugin, defineTool): a project need not
 *  install Runtrail to import it, and jiti transforms one small module rather than the whole runtime. */
function pluginApiEntry(): string {
  const js = fileURLToPath(new URL('./define.js', import.meta.url));
  return existsSync(js) ? js : js.replace(/\.js$/, '.ts');
}

/** The module a plugin spec names: a file, or an npm package resolved from the project folder. */
export function resolvePluginModule(spec: string, baseDir: string, projectDir: string): { ok: true; path: string } | { ok: false; message: string } {
  const isPath = spec.startsWith('.') || spec.startsWith('/') || /\.(?:[cm]?js|ts|mts|cts)$/.test(spec);
  if (isPath) {
    const path = join(spec.startsWith('/') ? '' : baseDir, spec);
    return existsSync(path) ? { ok: true, path } : { ok: false, message: `file not found: ${path}` };
  }
  try {
    return { ok: true, path: createRequire(join(projectDir, 'package.json')).resolve(spec) };
  } catch (e) {
    return { ok: false, message: `npm package "${spec}" not found from ${projectDir} (${(e as Error).message.split('\n')[0]}); install it in the project` };
  }
}

function problem(display: string, message: string, field?: string, level: 'error' | 'warning' = 'error'): DefinitionProblem {
  return { file: display, ...(field ? { field } : {}), message, level };
}

function checkTool(t: unknown, i: number, display: string): { tool?: PluginTool; problem?: DefinitionProblem } {
  const at = `tools[${i}]`;
  if (!t || typeof t !== 'object') return { problem: problem(display, `must be an object { name, description, parameters, execute }`, at) };
  const o = t as Record<string, unknown>;
  const name = typeof o.name === 'string' ? o.name : '';
  if (!TOOL_NAME.test(name)) return { problem: problem(display, `must be 1–64 letters, digits, _ or -, got ${JSON.stringify(o.name)}`, `${at}.name`) };
  const field = `${at} (${name})`;
  if (typeof o.description !== 'string' || !o.description.trim())
    return { problem: problem(display, 'is required: say what the tool does', `${field}.description`) };
  if (typeof o.execute !== 'function') return { problem: problem(display, 'must be a function (args, ctx) => result', `${field}.execute`) };
  const params = o.parameters ?? { type: 'object', properties: {} };
  if (!isZodSchema(params)) {
    if (typeof params !== 'object' || Array.isArray(params))
      return { problem: problem(display, 'must be a JSON Schema object or a zod schema', `${field}.parameters`) };
    const c = compileJsonSchema(params as Record<string, unknown>);
    if (!c.ok) return { problem: problem(display, c.message, `${field}.parameters`) };
  }
  if (o.timeoutMs !== undefined && (typeof o.timeoutMs !== 'number' || !(o.timeoutMs > 0)))
    return { problem: problem(display, 'must be a positive number of milliseconds', `${field}.timeoutMs`) };
  return { tool: { ...(o as unknown as PluginTool), parameters: params as PluginTool['parameters'] } };
}

function checkAgent(a: unknown, i: number, display: string): { agent?: Agent; problem?: DefinitionProblem } {
  const at = `agents[${i}]`;
  if (!a || typeof a !== 'object') return { problem: problem(display, 'must be a Agent object', at) };
  const o = a as Record<string, unknown>;
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(o.name))
    return { problem: problem(display, `name must be letters, digits, _ or -, got ${JSON.stringify(o.name)}`, `${at}.name`) };
  const field = `${at} (${o.name})`;
  if (typeof o.description !== 'string') return { problem: problem(display, 'is required', `${field}.description`) };
  if (typeof o.createTools !== 'function') return { problem: problem(display, 'must be a function (ctx) => tools', `${field}.createTools`) };
  if (o.inputSchema === undefined || typeof o.inputSchema !== 'object')
    return { problem: problem(display, 'is required (a zod schema or a JSON Schema of the run input)', `${field}.inputSchema`) };
  for (const k of ['plan', 'artifacts', 'validators', 'promptFragments', 'fileInputs'] as const) {
    if (o[k] !== undefined && !Array.isArray(o[k])) return { problem: problem(display, 'must be an array', `${field}.${k}`) };
  }
  const agent: Agent = {
    version: '0.0.0',
    fileInputs: [],
    defaultSkill: null,
    defaultGoal: o.description as string,
    promptFragments: [],
    plan: [],
    artifacts: [],
    validators: [],
    ...(o as Partial<Agent>),
  } as Agent;
  return { agent };
}

function checkChannel(c: unknown, i: number, display: string): { channel?: ChannelDefinition; problem?: DefinitionProblem } {
  const at = `channels[${i}]`;
  if (!c || typeof c !== 'object') return { problem: problem(display, 'must be a channel object { name, start }', at) };
  const o = c as Record<string, unknown>;
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(o.name))
    return { problem: problem(display, `name must be 1–64 letters, digits, _ or -, got ${JSON.stringify(o.name)}`, `${at}.name`) };
  const field = `${at} (${o.name})`;
  if (typeof o.start !== 'function') return { problem: problem(display, 'must be a function (ctx) => Promise<connection>', `${field}.start`) };
  if (o.configSchema !== undefined) {
    const s = compileJsonSchema(o.configSchema as Record<string, unknown>);
    if (!s.ok) return { problem: problem(display, s.message, `${field}.configSchema`) };
  }
  if (o.secretKeys !== undefined && !(Array.isArray(o.secretKeys) && o.secretKeys.every((k) => typeof k === 'string')))
    return { problem: problem(display, 'must be an array of key names', `${field}.secretKeys`) };
  return { channel: o as unknown as ChannelDefinition };
}

/** Imports `path` and checks its default export; never throws. */
export async function loadCodePlugin(path: string, display: string): Promise<CodePluginResult> {
  let mod: unknown;
  try {
    // loaded with the first code plugin: a project without one does not pay for it at start-up (~40 ms)
    const { createJiti } = await import('jiti');
    // no module or fs cache: `serve --watch` reloads a changed file, and nothing is written into the project
    const jiti = createJiti(import.meta.url, { moduleCache: false, fsCache: false, interopDefault: false, alias: { runtrail: pluginApiEntry() } });
    mod = await jiti.import(path);
  } catch (e) {
    return { ok: false, problems: [problem(display, `failed to load: ${(e as Error)?.message?.split('\n')[0] ?? String(e)}`)] };
  }
  const exported = (mod as { default?: unknown } | null)?.default;
  if (exported === undefined || exported === null) {
    return { ok: false, problems: [problem(display, 'exports nothing: a plugin file needs `export default { name, tools }` (or definePlugin({...}))')] };
  }
  if (typeof exported !== 'object') return { ok: false, problems: [problem(display, `its default export must be a plugin object, got ${typeof exported}`)] };
  const p = exported as Record<string, unknown>;
  if (typeof p.name !== 'string' || !p.name.trim()) return { ok: false, problems: [problem(display, 'is required', 'name')] };
  if (p.tools !== undefined && !Array.isArray(p.tools)) return { ok: false, problems: [problem(display, 'must be an array of tools', 'tools')] };
  if (p.agents !== undefined && !Array.isArray(p.agents)) return { ok: false, problems: [problem(display, 'must be an array of agents', 'agents')] };
  if (p.channels !== undefined && !Array.isArray(p.channels)) return { ok: false, problems: [problem(display, 'must be an array of channels', 'channels')] };
  if (!p.tools && !p.agents && !p.channels) return { ok: false, problems: [problem(display, 'the plugin has no tools, agents or channels')] };
  const problems: DefinitionProblem[] = [];
  const tools: PluginTool[] = [];
  (p.tools as unknown[] | undefined)?.forEach((t, i) => {
    const r = checkTool(t, i, display);
    if (r.tool) {
      if (tools.some((x) => x.name === r.tool!.name)) problems.push(problem(display, `tool "${r.tool.name}" is defined twice`, `tools[${i}].name`));
      else tools.push(r.tool);
    } else if (r.problem) problems.push(r.problem);
  });
  const agents: Agent[] = [];
  (p.agents as unknown[] | undefined)?.forEach((a, i) => {
    const r = checkAgent(a, i, display);
    if (r.agent) agents.push(r.agent);
    else if (r.problem) problems.push(r.problem);
  });
  const channels: ChannelDefinition[] = [];
  (p.channels as unknown[] | undefined)?.forEach((c, i) => {
    const r = checkChannel(c, i, display);
    if (r.channel) {
      if (channels.some((x) => x.name === r.channel!.name))
        problems.push(problem(display, `channel "${r.channel.name}" is defined twice`, `channels[${i}].name`));
      else channels.push(r.channel);
    } else if (r.problem) problems.push(r.problem);
  });
  return { ok: true, plugin: { name: p.name, version: typeof p.version === 'string' ? p.version : '0.0.0', display, tools, agents, channels }, problems };
}
