/**
 * What `runtrail doctor` checks of the project a run needs: its definitions (as `validate` does),
 * each MCP server (connects and lists its tools, within a timeout), the API keys of the models it
 * is configured with (present or not; a value is never printed), and whether the sandbox can start.
 */
import type { ExtensionRegistry } from '../extensions/extension-registry.js';
import { errorsOf, problemLine } from '../extensions/definition-problem.js';
import { modelKeyVar } from '../runtime/model-calls/model-key.js';
import { describeUnsupported, sandboxSupport } from '../sandbox/sandbox-support.js';
import { knownServers, probe, type ProbeResult } from './commands/mcp.js';

export interface ProjectCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

/** Every definition problem, as `validate` lists them: an error fails, a warning warns. */
export async function definitionChecks(registry: ExtensionRegistry, validateCommand: string): Promise<ProjectCheck[]> {
  const { projectTriggerProblems } = await import('../triggers/project-triggers.js');
  const problems = [...registry.problems, ...projectTriggerProblems(registry)];
  const errors = errorsOf(problems);
  const warnings = problems.length - errors.length;
  if (!problems.length)
    return [{ name: 'definitions', status: 'ok', detail: `${registry.names().length} agents, ${registry.tools.names().length} tools valid` }];
  const lines = problems.map((p) => `\n    ${p.level === 'warning' ? 'warning: ' : ''}${problemLine(p)}`).join('');
  const counts = [errors.length ? `${errors.length} error(s)` : '', warnings ? `${warnings} warning(s)` : ''].filter(Boolean).join(', ');
  return [{ name: 'definitions', status: errors.length ? 'fail' : 'warn', detail: `${counts} (${validateCommand} lists them):${lines}` }];
}

function timedOut(server: string, ms: number): ProbeResult {
  return { server, type: '', defined_in: '', target: '', ok: false, diagnosis: { code: 'timeout', summary: `no answer within ${ms / 1000} s` } };
}

/** Each configured MCP server connected and asked for its tools; one that does not answer in time fails. */
export async function mcpChecks(registry: ExtensionRegistry, env: Record<string, string | undefined>, timeoutMs: number): Promise<ProjectCheck[]> {
  const known = [...knownServers(registry, env).values()];
  return Promise.all(
    known.map(async (k): Promise<ProjectCheck> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<ProbeResult>((ok) => {
        timer = setTimeout(() => ok(timedOut(k.cfg.name, timeoutMs)), timeoutMs);
      });
      // the connection itself gives up at the timeout too, so no server outlives the check for long
      const cfg = { ...k.cfg, options: { ...k.cfg.options, connectTimeoutMs: Math.min(k.cfg.options.connectTimeoutMs, timeoutMs) } };
      const r = await Promise.race([probe(registry, { ...k, cfg }), late]).finally(() => clearTimeout(timer));
      const name = `mcp ${k.cfg.name}`;
      if (!r.ok)
        return { name, status: 'fail', detail: `unavailable: ${r.diagnosis?.summary ?? 'unknown error'}${r.diagnosis?.hint ? ` (${r.diagnosis.hint})` : ''}` };
      return {
        name,
        status: r.diagnosis ? 'warn' : 'ok',
        detail: `${r.tools?.length ?? 0} tools over ${r.transport} in ${r.timings_ms?.total ?? 0} ms${r.diagnosis ? `; ${r.diagnosis.summary}` : ''}`,
      };
    }),
  );
}

/** The models the project runs with: config.json's, RUNTRAIL_MODEL, each agent's own. */
function configuredModels(registry: ExtensionRegistry, env: Record<string, string | undefined>): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const add = (spec: string | undefined, by: string) => {
    if (!spec?.trim()) return;
    uses.set(spec.trim(), [...(uses.get(spec.trim()) ?? []), by]);
  };
  add(typeof registry.config.model === 'string' ? registry.config.model : undefined, 'config.json');
  add(env.RUNTRAIL_MODEL, 'RUNTRAIL_MODEL');
  for (const e of registry.entries()) add(e.agent.model, `agent ${e.agent.name}`);
  return uses;
}

/** For each model that needs a key: is its variable set? (The value is never read out.) */
export function apiKeyChecks(registry: ExtensionRegistry, env: Record<string, string | undefined>): ProjectCheck[] {
  const byVar = new Map<string, { models: string[]; by: string[] }>();
  for (const [spec, by] of configuredModels(registry, env)) {
    const keyVar = modelKeyVar(spec);
    if (!keyVar) continue;
    const v = byVar.get(keyVar) ?? { models: [], by: [] };
    v.models.push(spec);
    v.by.push(...by);
    byVar.set(keyVar, v);
  }
  if (!byVar.size) return [{ name: 'api keys', status: 'ok', detail: 'no configured model needs a key (offline and script models run without one)' }];
  return [...byVar].map(([keyVar, v]) => {
    const set = (env[keyVar] ?? '').trim() !== '';
    const used = `${v.models.join(', ')} (${[...new Set(v.by)].join(', ')})`;
    return set
      ? { name: `api key ${keyVar}`, status: 'ok', detail: `set, for ${used}` }
      : { name: `api key ${keyVar}`, status: 'fail', detail: `not set; ${used} cannot run without it` };
  });
}

/** The sandbox is opt-in: a machine that cannot start it is a warning naming the fix. */
export function sandboxCheck(): ProjectCheck {
  const s = sandboxSupport();
  return s.ok
    ? { name: 'sandbox', status: 'ok', detail: `bubblewrap (${s.bwrap}) starts a sandbox` }
    : { name: 'sandbox', status: 'warn', detail: describeUnsupported(s) };
}
