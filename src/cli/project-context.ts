/**
 * The project a command works on (`--project DIR`, else RUNTRAIL_PROJECT, else the working folder):
 * its extension registry (builtins, ~/.runtrail, DIR/.runtrail) and its data dir (DIR/.runtrail).
 * Definition problems go to stderr; with --strict an error among them stops the command (exit 2).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUILTIN_CHANNELS } from '../channels/builtin-channels.js';
import { ExtensionRegistry } from '../extensions/extension-registry.js';
import { errorsOf, problemLine, type DefinitionProblem } from '../extensions/definition-problem.js';
import { defaultSkillsDir } from '../runtime/package-root.js';
import { RunService } from '../runtime/service/run-service.js';
import type { RunObserver } from '../runtime/run-service-types.js';
import { UsageError, type CliDeps } from './cli-io.js';
import { prepareMcp } from './mcp-lifecycle.js';
import type { Values } from './args.js';
import { hintCommand } from './runtrail-command.js';

export interface ProjectContext {
  projectDir: string;
  dataDir: string;
  registry: ExtensionRegistry;
}

export class StrictError extends Error {}

export function projectDirOf(values: Values, deps: Pick<CliDeps, 'cwd' | 'env'>): string {
  const given = typeof values.project === 'string' ? values.project : deps.env.RUNTRAIL_PROJECT?.trim() || undefined;
  const dir = resolve(deps.cwd, given ?? '.');
  if (given !== undefined) {
    let ok = false;
    try {
      ok = statSync(dir).isDirectory();
    } catch {
      ok = false;
    }
    if (!ok) throw new UsageError(`${typeof values.project === 'string' ? '--project' : 'RUNTRAIL_PROJECT'}: ${dir} is not a folder`);
  }
  return dir;
}

/** `--data-dir`, else RUNTRAIL_DATA_DIR (relative to the working folder), else <project>/.runtrail. */
export function dataDirOf(values: Values, deps: Pick<CliDeps, 'cwd' | 'env'>, projectDir: string): string {
  const d = values['data-dir'];
  if (typeof d === 'string') return resolve(deps.cwd, d);
  const fromEnv = deps.env.RUNTRAIL_DATA_DIR?.trim();
  return fromEnv ? resolve(deps.cwd, fromEnv) : resolve(projectDir, '.runtrail');
}

export function loadRegistry(projectDir: string, deps: Pick<CliDeps, 'env' | 'agents' | 'skillsDir'>): Promise<ExtensionRegistry> {
  return ExtensionRegistry.load({
    projectDir,
    ...(deps.env.HOME ? { homeDir: deps.env.HOME } : {}),
    builtins: deps.agents,
    builtinSkillsDir: deps.skillsDir ?? defaultSkillsDir(),
    builtinChannels: [...BUILTIN_CHANNELS],
    env: deps.env,
  });
}

/** channels.json of the project or the user (`.runtrail/channels.json`, `~/.runtrail/channels.json`). */
function isChannelsFile(file: string): boolean {
  return file === 'channels.json' || file.endsWith('/channels.json');
}

/** Prints the registry's problems (errors and warnings) to stderr; throws StrictError on an error with --strict. */
export function reportProblems(
  registry: ExtensionRegistry,
  deps: Pick<CliDeps, 'stderr' | 'cwd' | 'env'>,
  strict: boolean,
  more: DefinitionProblem[] = [],
  shown: (p: DefinitionProblem) => boolean = () => true,
  o: { startsRuns?: boolean } = {},
): void {
  const problems = [...registry.problems, ...more].filter(shown);
  // a run is not started under durability settings config.json gets wrong: how many crashes it may
  // be resumed after would be a guess
  const refused = o.startsRuns ? errorsOf(problems).filter((p) => p.file.endsWith('config.json') && p.field?.startsWith('durability')) : [];
  if (refused.length) throw new StrictError(`${refused.map(problemLine).join('\n')}\n(no run is started until config.json's durability is fixed)`);
  for (const p of problems) deps.stderr.write(`runtrail: ${p.level === 'warning' ? 'warning: ' : ''}${problemLine(p)}\n`);
  const errors = errorsOf(problems);
  if (strict && errors.length)
    throw new StrictError(`${errors.length} definition problem(s); --strict stops here (${hintCommand(deps, 'validate')} lists them)`);
}

/** `startsRuns`: the command runs or resumes runs (refused when their durability settings are wrong). */
export async function projectContext(values: Values, deps: CliDeps, o: { startsRuns?: boolean } = {}): Promise<ProjectContext> {
  const projectDir = projectDirOf(values, deps);
  const registry = await loadRegistry(projectDir, deps);
  // these commands start no chat channel: channels.json's problems (a token variable not set) are
  // for serve, channels and validate to say
  reportProblems(registry, deps, values.strict === true, [], (p) => !isChannelsFile(p.file), o);
  const dataDir = dataDirOf(values, deps, projectDir);
  // MCP servers are recorded under the data dir; a SIGKILLed Runtrail's leftovers there are ended now
  await prepareMcp(registry, dataDir, deps.stderr);
  return { projectDir, dataDir, registry };
}

/** The CLI's RunService over a project: the CLI reads what its user can read. */
export function serviceFor(ctx: ProjectContext, deps: CliDeps, observers: RunObserver[] = []): RunService {
  return new RunService({
    dataDir: ctx.dataDir,
    agentSource: ctx.registry,
    skillDirs: ctx.registry.skillDirs,
    defaults: () => ctx.registry.config,
    inputRoots: 'any',
    concurrency: 1,
    env: deps.env,
    cwd: deps.cwd,
    ...(deps.providerResolver ? { providerResolver: deps.providerResolver } : {}),
    ...(observers.length ? { observers } : {}),
  });
}
