/**
 * Triggers over a project: the agents, their inputs, config.json's trigger keys and the declared
 * schedules all come from the extension registry of the moment (`serve --watch` replaces it).
 */
import type { DefinitionProblem } from '../extensions/definition-problem.js';
import type { ExtensionRegistry } from '../extensions/extension-registry.js';
import { defaultInputRoots } from '../runtime/data-dir.js';
import { checkInputFiles, fileInputSources } from '../runtime/service/run-admission.js';
import { checkPluginInput } from '../runtime/plugin-input.js';
import { declaredSchedules, triggerConfigProblems } from './declared-schedules.js';
import type { DefinitionContext } from './schedule-definition.js';
import { triggerConfig, type TriggerConfig } from './trigger-config.js';
import { TriggerHost, type TriggerHostOptions } from './trigger-host.js';
import type { FieldIssue } from './types.js';

type Registry = Pick<ExtensionRegistry, 'projectDir' | 'entries' | 'names' | 'get' | 'config'>;

/** Issues of an input against the agent's input schema, named under `input`. */
export function agentInputIssues(registry: Registry, agent: string, input: Record<string, unknown>): FieldIssue[] {
  const plugin = registry.get(agent);
  if (!plugin) return [];
  const c = checkPluginInput(plugin, input);
  return c.ok ? [] : c.issues.map((i) => ({ path: ['input', ...i.path.map(String)].join('.'), message: i.message }));
}

/** What the schedules of a registry are checked against. */
export function registryContext(registry: Registry, config: TriggerConfig, now: () => number = Date.now): DefinitionContext {
  return { agents: () => registry.names(), inputIssues: (a, i) => agentInputIssues(registry, a, i), allow: config.allow, now };
}

/** Every trigger problem of the project: config.json's keys, then each declared schedule. */
export function projectTriggerProblems(registry: Registry): DefinitionProblem[] {
  const config = triggerConfig(registry.config).config;
  return [...triggerConfigProblems(registry.config), ...declaredSchedules(registry, registryContext(registry, config)).problems];
}

/**
 * The file inputs of a schedule's input, checked as the service that fires it admits a run's: inside
 * its input roots (the data dir's uploads), existing, usable by the agent. Throws the same
 * RunRequestError (`input_outside_roots`, `invalid_request`) as `POST /api/runs` would answer.
 */
export async function checkScheduleInputFiles(
  registry: Registry,
  agent: string,
  input: Record<string, unknown>,
  where: { dataDir: string; cwd: string },
): Promise<void> {
  const plugin = registry.get(agent);
  if (!plugin) return;
  const sources = fileInputSources(plugin, input, { cwd: where.cwd, inputRoots: defaultInputRoots(where.dataDir) });
  await checkInputFiles(plugin, input, sources);
}

export function projectTriggers(
  registry: () => Registry,
  opts: Omit<TriggerHostOptions, 'agents' | 'inputIssues' | 'checkInputFiles' | 'config' | 'declared'> & { cwd?: string },
): TriggerHost {
  // one parse per registry: read at every fire and delivery, changed only by a reload
  let parsedFor: Registry | null = null;
  let parsed: TriggerConfig | null = null;
  const config = (): TriggerConfig => {
    const r = registry();
    if (r !== parsedFor || !parsed) {
      parsed = triggerConfig(r.config).config;
      parsedFor = r;
    }
    return parsed;
  };
  return new TriggerHost({
    ...opts,
    agents: () => registry().names(),
    inputIssues: (a, i) => agentInputIssues(registry(), a, i),
    checkInputFiles: (a, i) => checkScheduleInputFiles(registry(), a, i, { dataDir: opts.dataDir, cwd: opts.cwd ?? process.cwd() }),
    config,
    declared: () => declaredSchedules(registry(), registryContext(registry(), config())).schedules,
  });
}
