/** GET /api/plugins: what the web form is generated from (each plugin's input as JSON Schema). */
import { pluginInputJsonSchema } from '../runtime/plugin-input.js';
import type { Agent } from '../runtime/agent.js';

export interface PluginInfo {
  name: string;
  version: string;
  description: string;
  defaultGoal: string;
  defaultSkill: string | null;
  fileInputs: string[];
  inputSchema: Record<string, unknown>;
  artifacts: Array<{ path: string; type: string; description: string; required: boolean }>;
  /** builtin, or the user's / project's file it comes from */
  source: { kind: string; file?: string };
  /** the model the definition asks for, when it names one */
  model: string | null;
}

const cache = new WeakMap<Agent, PluginInfo>();

/** Computed once per plugin object (a reload makes new objects). */
export function pluginInfo(p: Agent): PluginInfo {
  const hit = cache.get(p);
  if (hit) return hit;
  const info: PluginInfo = {
    name: p.name,
    version: p.version,
    description: p.description,
    defaultGoal: p.defaultGoal,
    defaultSkill: p.defaultSkill,
    fileInputs: [...p.fileInputs],
    inputSchema: pluginInputJsonSchema(p),
    artifacts: p.artifacts.map((a) => ({ path: a.path, type: a.type, description: a.description, required: a.required })),
    source: p.source ?? { kind: 'builtin' },
    model: p.model ?? null,
  };
  cache.set(p, info);
  return info;
}

/** JSON-Schema property types of a plugin input, to coerce `key=value` text from the IM endpoint. */
export function propertyTypes(info: PluginInfo): Record<string, string> {
  const props = (info.inputSchema.properties ?? {}) as Record<string, { type?: unknown; anyOf?: Array<{ type?: unknown }> }>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(props)) {
    const t = typeof v?.type === 'string' ? v.type : v?.anyOf?.find((a) => typeof a.type === 'string' && a.type !== 'null')?.type;
    if (typeof t === 'string') out[k] = t;
  }
  return out;
}
