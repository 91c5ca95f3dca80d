/**
 * `runtrail` commands: run, runs, show, replay, plugins, skills, start, serve.
 * Exit 0 completed, 1 failed, 2 bad usage or input, 130 cancelled.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { defaultDataDir } from '../runtime/data-dir.js';
import { runtrailPackageRoot, defaultSkillsDir } from '../runtime/package-root.js';
import { RunRequestError } from '../runtime/run-request-error.js';
import { RunService } from '../runtime/run-service.js';
import type { CreateRunRequest, RunLimits, RunStatusFile } from '../runtime/run-service-types.js';
import { RUN_STATUSES, type RunStatus } from '../events/agent-event.js';
import { listSkills } from '../runtime/compute-skills.js';
import { checkPluginInput, pluginInputJsonSchema } from '../runtime/plugin-input.js';
import { coerceInput, parseInputJson, parseInputPairs } from './build-input.js';
import { EXIT, UsageError, type CliDeps } from './cli-io.js';
import { agentRow, printAgents } from './agents-command.js';
import { approvalHandler } from './cli-approvals.js';
import { initProject } from './init-project.js';
import { mcpCommand } from './mcp-command.js';
import { stopMcp } from './mcp-lifecycle.js';
import { StrictError, dataDirOf, loadRegistry, projectContext, projectDirOf, serviceFor, type ProjectContext, type Values } from './project-context.js';
import { errorsOf, problemLine } from '../extensions/definition-problem.js';
import { WIRE_FORMATS, createWireWriter, type WireFormat } from './wire-output.js';
import { cliTelemetry, finishTelemetry } from './cli-telemetry.js';
import { readRunMetrics, usageLines } from './usage-lines.js';
import { REASONING_EFFORTS, type ReasoningEffort } from '../runtime/create-run-request.js';
import { ClusterConfigError } from '../distributed/cluster-settings.js';
import { doctorCommand } from './doctor-command.js';
import { ServiceUnavailableError } from '../distributed/service-url.js';

export const USAGE = `Usage: runtrail <command> [options]

Commands:
  run <plugin>        run a plugin: --goal TEXT, --input key=value (repeatable), --input-json JSON|@file,
                      --model SPEC (offline | script:<file.json> | openai:<model> | anthropic:<model> |
                      deepseek:<model> | openai-compatible:<model> | ollama:<model>), --skill NAME,
                      --conversation ID, --max-iterations N, --max-tool-calls N, --timeout-s N,
                      --stop-repair-turns N, --context-tokens N, --reasoning off|low|medium|high,
                      --json (NDJSON wire frames), --show-reasoning (print the model's reasoning),
                      --approve-all | --deny-all (tool calls an agent must ask about; else y/N on a terminal)
  runs                list runs: --status S, --plugin P, --limit N, --json
  show <run_id>       a run's status and documents: --json
  replay <run_id>     replay a run from runtime/events.jsonl: --format ndjson|sse|text (default text),
                      --show-reasoning
  agents              list every agent (builtin, ~/.runtrail, the project's) with its source: --json
  plugins             list agents and their inputs: --json
  skills              list skills: --json
  validate            check every definition of the project: exit 0 when all are valid, else 2
                      with one line per problem (file: field: message)
  init [DIR]          write a small working project (an agent, a skill, a code plugin, a script model)
  start               feedbacklens on examples/feedback.csv with the offline model
  serve               start the HTTP server and web page: --host H, --port N, --watch (reload
                      agents, skills and plugins for the next run when their files change),
                      --concurrency N (runs at once, default 4); with RUNTRAIL_REDIS_URL and
                      RUNTRAIL_DATABASE_URL set: --role api|worker|all (default all)
  worker              several nodes: claim and run queued runs (serve --role worker):
                      --concurrency N (default 4), --drain-s N (on SIGTERM, let runs finish for
                      N s, default 60, then interrupt them)
  doctor              check this node: data dir, and with several nodes Redis, PostgreSQL, the
                      workers and whether the data dir is shared with them: --json
  mcp list            every MCP server of .runtrail/mcp.json and ~/.runtrail/mcp.json: status, tools
  mcp probe <server>  connect to one MCP server: its tools (as agents name them) and the timings
  mcp serve           Runtrail as an MCP server on stdio; --http PORT for Streamable HTTP on 127.0.0.1

Every command takes --project DIR (default RUNTRAIL_PROJECT or the working folder: definitions in
DIR/.runtrail and ~/.runtrail), --data-dir DIR (default RUNTRAIL_DATA_DIR or DIR/.runtrail) and
--strict (a broken definition stops the command instead of being skipped with a warning).
Exit codes: 0 completed, 1 failed, 2 bad usage or input, 130 cancelled.
`;

const STATUSES: readonly RunStatus[] = RUN_STATUSES;


function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>): { values: Values; positionals: string[] } {
  try {
    const r = parseArgs({ args, options: { 'data-dir': { type: 'string' }, project: { type: 'string' }, strict: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, ...options }, allowPositionals: true, strict: true });
    return { values: r.values as Values, positionals: r.positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function intOpt(values: Values, name: string, min: number): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !/^\d+(\.\d+)?$/.test(v.trim()) || !Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}

export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        deps.stdout.write(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      case 'run':
        return await runCommand(rest, deps);
      case 'start':
        return await startCommand(rest, deps);
      case 'runs':
        return await runsCommand(rest, deps);
      case 'show':
        return await showCommand(rest, deps);
      case 'replay':
        return await replayCommand(rest, deps);
      case 'plugins':
        return await pluginsCommand(rest, deps);
      case 'agents':
        return await agentsCommand(rest, deps);
      case 'validate':
        return await validateCommand(rest, deps);
      case 'init':
        return initCommand(rest, deps);
      case 'skills':
        return await skillsCommand(rest, deps);
      case 'serve':
        return await serveCommand(rest, deps);
      case 'worker':
        return await serveCommand(rest, deps, true);
      case 'doctor': {
        const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
        if (positionals.length) throw new UsageError('doctor takes no arguments');
        return await doctorCommand(values, dataDirOf(values, deps, projectDirOf(values, deps)), deps);
      }
      case 'mcp':
        return await mcpCommand(rest, deps, parse);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      deps.stderr.write(`runtrail: ${e.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (e instanceof StrictError) {
      deps.stderr.write(`runtrail: ${e.message}\n`);
      return EXIT.usage;
    }
    if (e instanceof RunRequestError) {
      deps.stderr.write(`runtrail: ${e.message}\n`);
      for (const i of e.details.issues ?? []) deps.stderr.write(`  - ${i.path}: ${i.message}\n`);
      if (e.details.validPlugins) deps.stderr.write(`  valid plugins: ${e.details.validPlugins.join(', ')}\n`);
      return e.code === 'not_found' || e.code === 'wrong_state' ? EXIT.failed : EXIT.usage;
    }
    deps.stderr.write(`runtrail: ${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT.failed;
  } finally {
    // the MCP servers this command started: SIGTERM to each group, SIGKILL after the grace
    await stopMcp();
  }
}

/** A RunService over the command's project (builtins, ~/.runtrail, DIR/.runtrail). */
async function projectService(values: Values, deps: CliDeps): Promise<{ ctx: ProjectContext; service: RunService }> {
  const ctx = await projectContext(values, deps);
  return { ctx, service: serviceFor(ctx, deps) };
}

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
} as const;

async function runCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, RUN_OPTIONS);
  if (values.help) {
    deps.stdout.write(USAGE);
    return EXIT.ok;
  }
  const ctx = await projectContext(values, deps);
  const names = ctx.registry.names();
  if (positionals.length !== 1) throw new UsageError(`run needs exactly one agent (valid: ${names.join(', ')})`);
  const pluginName = positionals[0];
  const plugin = ctx.registry.get(pluginName);
  let input: Record<string, unknown> = typeof values['input-json'] === 'string' ? parseInputJson(values['input-json'], deps.cwd) : {};
  const pairs = parseInputPairs((values.input as string[] | undefined) ?? []);
  input = { ...input, ...pairs };
  if (plugin) input = coerceInput(input, new Set(Object.keys(pairs)), (v) => {
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
  return executeAndFollow(req, values, deps, values.json === true ? 'ndjson' : 'text', ctx);
}

async function startCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values } = parse(args, { model: { type: 'string' }, json: { type: 'boolean' } });
  const csv = deps.exampleCsv ?? join(runtrailPackageRoot(), 'examples', 'feedback.csv');
  if (!deps.plugins.some((p) => p.name === 'feedbacklens')) throw new UsageError('start needs the feedbacklens plugin');
  if (!existsSync(csv)) throw new UsageError(`example data not found: ${csv}`);
  const req: CreateRunRequest = { plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'TaskFlow Pro' },
    goal: 'Find the most important product problems and prioritise them',
    model: typeof values.model === 'string' ? values.model : 'offline' };
  return executeAndFollow(req, values, deps, values.json === true ? 'ndjson' : 'text');
}

function exitFor(status: RunStatus): number {
  return status === 'completed' ? EXIT.ok : status === 'cancelled' ? EXIT.cancelled : EXIT.failed;
}

async function executeAndFollow(req: CreateRunRequest, values: Values, deps: CliDeps, format: WireFormat, project?: ProjectContext): Promise<number> {
  const ctx = project ?? (await projectContext(values, deps));
  // traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; TRACEPARENT (an env carrier) makes the run part of the caller's trace
  const telemetry = await cliTelemetry(deps.env, deps.stderr);
  const service = serviceFor(ctx, deps, telemetry ? [telemetry.observer] : []);
  try {
    const created = await service.create(req, { claw: 'cli', ...(deps.env.TRACEPARENT ? { traceparent: deps.env.TRACEPARENT } : {}) });
    const runId = created.run_id;
    const note = format === 'text' ? deps.stdout : deps.stderr;
    if (format === 'text') note.write(`▶ ${runId} · ${created.plugin} ${created.plugin_version} · model ${created.provider}:${created.model}\n`);
    const writer = createWireWriter(format, runId, deps.stdout, { showReasoning: values['show-reasoning'] === true, traceId: created.trace_id });
    let cancelling = false;
    const off = deps.onInterrupt?.(() => {
      if (cancelling) return;
      cancelling = true;
      deps.stderr.write('\nruntrail: cancelling…\n');
      void service.cancel(runId).catch(() => undefined);
    });
    try {
      if (values['approve-all'] === true && values['deny-all'] === true) throw new UsageError('--approve-all and --deny-all exclude each other');
      const onApproval = approvalHandler(service, runId, values['approve-all'] === true ? 'approve-all' : values['deny-all'] === true ? 'deny-all' : 'ask', deps);
      for await (const ev of service.events(runId)) {
        writer.write(ev);
        onApproval(ev);
      }
    } finally {
      off?.();
    }
    const final = await service.wait(runId);
    printSummary(final, service.runsDir, note);
    return exitFor(final.status);
  } finally {
    await service.close();
    await finishTelemetry(telemetry, deps.stderr);
  }
}

function printSummary(s: RunStatusFile, runsDir: string, out: { write(s: string): unknown }): void {
  const dir = join(runsDir, s.run_id);
  out.write(`\n${s.status === 'completed' ? '✓' : s.status === 'cancelled' ? '■' : '✗'} run ${s.run_id} ${s.status}\n`);
  if (s.diagnosis && s.status !== 'completed') out.write(`  ${s.diagnosis.summary}\n`);
  out.write(`  run folder: ${dir}\n`);
  if (s.public_documents.length) {
    out.write(`  artifacts:\n`);
    for (const d of s.public_documents) out.write(`    ${join(dir, d.path)} (${d.bytes} bytes)\n`);
  }
}

async function runsCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values } = parse(args, { status: { type: 'string' }, plugin: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } });
  const status = values.status as RunStatus | undefined;
  if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  const limit = intOpt(values, 'limit', 1) ?? 20;
  const { service } = await projectService(values, deps);
  try {
    const { runs, total } = await service.list({ ...(status ? { status } : {}), ...(typeof values.plugin === 'string' ? { plugin: values.plugin } : {}), limit });
    if (values.json) {
      deps.stdout.write(`${JSON.stringify({ runs, total })}\n`);
      return EXIT.ok;
    }
    if (!runs.length) {
      deps.stdout.write('no runs\n');
      return EXIT.ok;
    }
    for (const r of runs) {
      const goal = r.goal.length > 50 ? `${r.goal.slice(0, 49)}…` : r.goal;
      deps.stdout.write(`${r.run_id}  ${r.status.padEnd(14)} ${r.plugin.padEnd(14)} ${goal}\n`);
    }
    if (total > runs.length) deps.stdout.write(`(${runs.length} of ${total}; --limit N for more)\n`);
    return EXIT.ok;
  } finally {
    await service.close();
  }
}

async function showCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('show needs a run id');
  const { service } = await projectService(values, deps);
  try {
    const s = await service.get(positionals[0]);
    if (!s) throw new RunRequestError('not_found', `run ${positionals[0]} not found in ${service.runsDir}`);
    if (values.json) {
      deps.stdout.write(`${JSON.stringify({ status: s, manifest: await service.manifest(s.run_id), metrics: await readRunMetrics(service.runsDir, s.run_id) }, null, 2)}\n`);
      return EXIT.ok;
    }
    const lines = [
      `run        ${s.run_id}`,
      `status     ${s.status}${s.diagnosis ? ` (${s.diagnosis.code}: ${s.diagnosis.summary})` : ''}`,
      `plugin     ${s.plugin} ${s.plugin_version}${s.skill ? ` · skill ${s.skill}` : ''}`,
      `model      ${s.provider}:${s.model}`,
      `goal       ${s.goal}`,
      `created    ${s.created_at}`,
      `finished   ${s.finished_at ?? '-'}`,
      `events     ${s.last_seq}`,
      ...usageLines(await readRunMetrics(service.runsDir, s.run_id)),
      `answer     ${s.final_answer || '-'}`,
    ];
    deps.stdout.write(`${lines.join('\n')}\n`);
    printSummary(s, service.runsDir, deps.stdout);
    return EXIT.ok;
  } finally {
    await service.close();
  }
}

async function replayCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, { format: { type: 'string' }, 'show-reasoning': { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('replay needs a run id');
  const format = (values.format ?? 'text') as WireFormat;
  if (!WIRE_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${WIRE_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}`);
  const { service } = await projectService(values, deps);
  try {
    const s = await service.get(positionals[0]);
    if (!s) throw new RunRequestError('not_found', `run ${positionals[0]} not found in ${service.runsDir}`);
    const writer = createWireWriter(format, s.run_id, deps.stdout, { showReasoning: values['show-reasoning'] === true, traceId: s.trace_id });
    for await (const ev of service.events(s.run_id)) writer.write(ev);
    return EXIT.ok;
  } finally {
    await service.close();
  }
}

async function pluginsCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values } = parse(args, { json: { type: 'boolean' } });
  const ctx = await projectContext(values, deps);
  const rows = ctx.registry.entries().map(({ agent: p, source }) => ({ ...agentRow(p, source), fileInputs: p.fileInputs, defaultSkill: p.defaultSkill }));
  if (values.json) {
    deps.stdout.write(`${JSON.stringify(rows)}\n`);
    return EXIT.ok;
  }
  for (const r of rows) {
    deps.stdout.write(`${r.name} ${r.version}  ${r.description}\n  input: ${r.inputs.join(', ') || '-'}\n  skill: ${r.defaultSkill ?? '-'}  artifacts: ${r.artifacts.join(', ') || '-'}\n`);
  }
  return EXIT.ok;
}

async function agentsCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values } = parse(args, { json: { type: 'boolean' } });
  const ctx = await projectContext(values, deps);
  printAgents(ctx.registry, deps.stdout, values.json === true);
  return EXIT.ok;
}

async function validateCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (positionals.length) throw new UsageError('validate takes no arguments (use --project DIR)');
  const projectDir = projectDirOf(values, deps);
  const registry = await loadRegistry(projectDir, deps);
  const errors = errorsOf(registry.problems);
  if (values.json) {
    deps.stdout.write(`${JSON.stringify({ ok: errors.length === 0, agents: registry.names(), problems: registry.problems })}\n`);
    return errors.length ? EXIT.usage : EXIT.ok;
  }
  for (const p of registry.problems) (p.level === 'error' ? deps.stdout : deps.stderr).write(`${p.level === 'warning' ? 'warning: ' : ''}${problemLine(p)}\n`);
  if (errors.length === 0) deps.stderr.write(`ok: ${registry.names().length} agents, ${registry.tools.names().length} tools valid in ${projectDir}\n`);
  return errors.length ? EXIT.usage : EXIT.ok;
}

function initCommand(args: string[], deps: CliDeps): number {
  const { positionals } = parse(args, {});
  if (positionals.length > 1) throw new UsageError('init takes at most one folder');
  const shown = positionals[0] ?? '.';
  const dir = resolve(deps.cwd, shown);
  let r;
  try {
    r = initProject(dir, shown);
  } catch (e) {
    deps.stderr.write(`runtrail: ${(e as Error).message}\n`);
    return EXIT.usage;
  }
  deps.stdout.write(`Created a Runtrail project in ${dir}:\n${r.files.map((f) => `  ${f}`).join('\n')}\n\nRun it to completion offline (its agent uses the scripted model next to it):\n  ${r.command}\n`);
  return EXIT.ok;
}

async function skillsCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values } = parse(args, { json: { type: 'boolean' } });
  const ctx = await projectContext(values, deps);
  const { skills, errors } = await listSkills(ctx.registry.skillDirs);
  if (values.json) {
    deps.stdout.write(`${JSON.stringify({ skills: skills.map((s) => ({ ...s.manifest, dir: s.dir, format: s.format })), errors })}\n`);
    return EXIT.ok;
  }
  if (!skills.length && !errors.length) deps.stdout.write(`no skills in ${ctx.registry.skillDirs.join(', ')}\n`);
  for (const s of skills) {
    const m = s.manifest;
    deps.stdout.write(
      s.format === 'agent-skill'
        ? `${m.name} ${m.version}  ${m.description ?? ''}  (${s.dir})\n`
        : `${m.name} ${m.version}  plugins: ${m.compatible_plugins.join(', ')}  tools: ${m.required_tools.join(', ') || '-'}  outputs: ${m.output_artifacts.join(', ') || '-'}\n`,
    );
  }
  for (const e of errors) deps.stderr.write(`✗ ${e.name}: ${e.message}\n`);
  return errors.length ? EXIT.failed : EXIT.ok;
}

async function serveCommand(args: string[], deps: CliDeps, worker = false): Promise<number> {
  const { values } = parse(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    watch: { type: 'boolean' },
    role: { type: 'string' },
    concurrency: { type: 'string' },
    'drain-s': { type: 'string' },
  });
  if (!deps.serve) throw new UsageError('serve is not available in this build');
  const role = worker ? 'worker' : (values.role ?? 'all');
  if (role !== 'api' && role !== 'worker' && role !== 'all') throw new UsageError(`--role must be api, worker or all, got ${JSON.stringify(role)}`);
  if (worker && values.role !== undefined) throw new UsageError('worker takes no --role (it is serve --role worker)');
  const port = intOpt(values, 'port', 0);
  const concurrency = intOpt(values, 'concurrency', 1);
  const drainS = intOpt(values, 'drain-s', 0);
  const projectDir = projectDirOf(values, deps);
  let server;
  try {
    server = await deps.serve({
      dataDir: dataDirOf(values, deps, projectDir),
      projectDir,
      watch: values.watch === true,
      strict: values.strict === true,
      role,
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(drainS !== undefined ? { drainS } : {}),
      ...(typeof values.host === 'string' ? { host: values.host } : {}),
      ...(port !== undefined ? { port } : {}),
      skillsDir: deps.skillsDir ?? defaultSkillsDir(),
      env: deps.env,
    });
  } catch (e) {
    // a service that cannot be reached, or its variables set wrong: say which, exit 2
    if (e instanceof ClusterConfigError || e instanceof ServiceUnavailableError) {
      deps.stderr.write(`runtrail: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
  deps.stdout.write(`${server.describe ?? `runtrail serving on ${server.url}`} (Ctrl-C to stop)\n`);
  // the handler stays until the server is closed: were it removed on the signal itself, the child-process
  // signal bridge (MCP servers, background sessions) would find itself the only listener and re-raise it
  let off: (() => void) | undefined;
  await new Promise<void>((resolveStop) => {
    off = deps.onInterrupt?.(() => resolveStop());
    if (!deps.onInterrupt) resolveStop();
  });
  await server.close();
  off?.();
  return EXIT.ok;
}
