/** `runtrail run <agent>`: one run, followed live in the terminal (or as NDJSON wire frames). */
import type { CreateRunRequest, RunLimits } from '../../runtime/run-service-types.js';
import { REASONING_EFFORTS, type ReasoningEffort } from '../../runtime/create-run-request.js';
import { checkPluginInput } from '../../runtime/plugin-input.js';
import { intOpt, parse } from '../args.js';
import { coerceInput, parseInputJson, parseInputPairs } from '../build-input.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { executeAndFollow, type RunStart } from '../follow-run.js';
import { projectContext } from '../project-context.js';
import { shellWord } from '../runtrail-command.js';

const RUN_OPTIONS = {
  goal: { type: 'string' },
  input: { type: 'string', multiple: true },
  'input-json': { type: 'string' },
  model: { type: 'string' },
  skill: { type: 'string' },
  conversation: { type: 'string' },
  'max-iterations': { type: 'string' },
  'max-tool-calls': { type: 'string' },
  'timeout-s': { type: 'string' },
  'stop-repair-turns': { type: 'string' },
  'context-tokens': { type: 'string' },
  json: { type: 'boolean' },
  reasoning: { type: 'string' },
  'show-reasoning': { type: 'boolean' },
  'approve-all': { type: 'boolean' },
  'deny-all': { type: 'boolean' },
  resume: { type: 'boolean' },
} as const;

/** `run … --resume`: the agent's newest run whose process died goes on; without one, a new run. */
const resumeOrCreate: RunStart = async (service, req, how) => {
  await service.init();
  for (const id of service.resumableRuns().sort().reverse()) {
    const s = await service.get(id);
    if (s?.plugin === req.plugin) return service.resume(id);
  }
  return service.create(req, how);
};

export const runCommand: CliCommand = {
  name: 'run',
  usage: `  run <plugin>        run a plugin: --goal TEXT, --input key=value (repeatable), --input-json JSON|@file,
                      --model SPEC (offline | script:<file.json> | openai:<model> | anthropic:<model> |
                      deepseek:<model> | openai-compatible:<model> | ollama:<model>), --skill NAME,
                      --conversation ID, --max-iterations N, --max-tool-calls N, --timeout-s N,
                      --stop-repair-turns N, --context-tokens N, --reasoning off|low|medium|high,
                      --json (NDJSON wire frames), --show-reasoning (print the model's reasoning),
                      --approve-all | --deny-all (tool calls an agent must ask about; else y/N on a terminal),
                      --resume (take up this agent's newest run whose process died, if there is one)
`,
  async run(args, deps, usage) {
    const { values, positionals } = parse(args, RUN_OPTIONS);
    if (values.help) {
      deps.stdout.write(usage);
      return EXIT.ok;
    }
    const ctx = await projectContext(values, deps, { startsRuns: true });
    const names = ctx.registry.names();
    if (positionals.length === 0) throw new UsageError(`run needs an agent: run <agent> [--input key=value …] (agents: ${names.join(', ')})`);
    const [pluginName, stray] = positionals;
    const plugin = ctx.registry.get(pluginName);
    if (stray !== undefined) throw new UsageError(unexpectedArgument(stray, plugin?.fileInputs ?? []));
    let input: Record<string, unknown> = typeof values['input-json'] === 'string' ? parseInputJson(values['input-json'], deps.cwd) : {};
    const pairs = parseInputPairs((values.input as string[] | undefined) ?? []);
    input = { ...input, ...pairs };
    if (plugin)
      input = coerceInput(input, new Set(Object.keys(pairs)), (v) => {
        const r = checkPluginInput(plugin, v);
        return r.ok ? [] : r.issues;
      });
    const limits: Partial<RunLimits> = {};
    const mi = intOpt(values, 'max-iterations', 1);
    if (mi !== undefined) limits.max_iterations = mi;
    const mt = intOpt(values, 'max-tool-calls', 1);
    if (mt !== undefined) limits.max_tool_calls = mt;
    const ts = intOpt(values, 'timeout-s', 0);
    if (ts !== undefined) limits.timeout_s = ts;
    const sr = intOpt(values, 'stop-repair-turns', 0);
    if (sr !== undefined) limits.stop_repair_turns = sr;
    const ct = intOpt(values, 'context-tokens', 1);
    if (ct !== undefined) limits.context_tokens = ct;
    const reasoning = values.reasoning;
    if (reasoning !== undefined && !(REASONING_EFFORTS as readonly unknown[]).includes(reasoning)) {
      throw new UsageError(`--reasoning must be one of ${REASONING_EFFORTS.join(', ')}, got ${JSON.stringify(reasoning)}`);
    }
    const req: CreateRunRequest = {
      plugin: pluginName,
      input,
      ...(typeof values.goal === 'string' ? { goal: values.goal } : {}),
      ...(typeof values.model === 'string' ? { model: values.model } : {}),
      ...(typeof values.skill === 'string' ? { skill: values.skill } : {}),
      ...(typeof values.conversation === 'string' ? { conversation_id: values.conversation } : {}),
      ...(typeof reasoning === 'string' ? { reasoning: reasoning as ReasoningEffort } : {}),
      ...(Object.keys(limits).length ? { limits } : {}),
    };
    return (await executeAndFollow(req, values, deps, values.json === true ? 'ndjson' : 'text', ctx, values.resume === true ? resumeOrCreate : undefined)).exit;
  },
};

/** A word after the agent's name: what it most likely was meant to be (a file input, a key=value, the goal). */
export function unexpectedArgument(arg: string, fileInputs: readonly string[]): string {
  const shown = shellWord(arg);
  let meant: string | null = null;
  if (/^[A-Za-z_][\w-]*=/.test(arg)) meant = `--input ${shown}`;
  else if (/\s/.test(arg)) meant = `--goal ${shown}`;
  else if (fileInputs.length > 0) meant = `--input ${shellWord(`${fileInputs[0]}=${arg}`)}`;
  return `unexpected argument ${shown}${meant ? `; did you mean ${meant}?` : ' (run takes one agent; inputs go in --input key=value)'}`;
}
