/**
 * Preparation: an admitted run's record (RunRecord) made from its spec — the agent's tools and tool
 * sources, the capability snapshot, the run folder with its inputs copied in, the bus and its event
 * log, the status and the state machine that changes it. A new run and a run rebuilt on a worker
 * (`resume`: its status and events exist) are prepared alike. What it needs of the service is
 * PreparationHost, passed in.
 */
import { AgentEventBus } from '../../events/agent-event-bus.js';
import { createRawStreamLogger } from '../../events/raw-stream-log.js';
import { maskSecretsDeep } from '../../events/secret-masker.js';
import type { ChatMessage, ModelProvider, ReasoningEffort } from '../../providers/model-provider.js';
import { skillIncompatibilities, type LoadedSkill } from '../../skills/skill-loader.js';
import type { AnyToolDefinition } from '../../tools/tool.js';
import type { ToolSource } from '../../tools/tool-source.js';
import type { Agent, AgentRunContext } from '../agent.js';
import type { ParsedCreateRunRequest } from '../create-run-request.js';
import type { ModelChoice } from '../service/run-admission.js';
import type { ConfinedPath } from '../../tools/confined-files.js';
import { resolveCapabilities } from './run-capabilities.js';
import type { RequestFile } from '../storage/run-folder.js';
import type { RunRecord } from './run-record.js';
import type { CreateRunOptions, RunLimits, RunObserver, RunStatusFile, RunTrigger, RunWebhook } from '../run-service-types.js';
import type { RunTraceContext } from '../../events/trace-context.js';
import { RunStateMachine, isTerminalRunState } from '../run-state-machine.js';
import { LatestWrite } from '../storage/latest-write.js';
import { RunStatusWriter } from '../storage/run-status-writer.js';
import { RunWorkspace } from '../storage/run-workspace.js';
import { RunInbox } from '../loop/run-inbox.js';
import type { RunStore } from '../storage/run-store.js';
import { createRunAgentTool, type SubagentHost } from '../loop/subagent-tool.js';
import type { ResolvedCapture } from '../model-calls/capture-settings.js';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy.js';
import { ModelCallFeed } from '../model-calls/model-call-feed.js';
import { fail } from '../errors.js';

/** The run that started this one (through run_agent), and its call. */
export interface ParentLink {
  rec: RunRecord;
  toolCallId: string;
}

/** What preparation needs of the service that runs the run. */
export interface PreparationHost {
  readonly runsDir: string;
  readonly dataDir: string;
  readonly env: Record<string, string | undefined>;
  readonly store: RunStore;
  readonly observers: readonly RunObserver[];
  /** The earlier runs of a conversation, as the model's history. */
  historyFor(conversationId: string): Promise<ChatMessage[]>;
  /** `run://<child_run_id>/artifacts/<path>` of one of `rec`'s subagents. */
  childArtifact(rec: RunRecord | null, rest: string): ConfinedPath;
  /** What run_agent needs of the service, for one parent run. */
  subagentHost(parentOf: () => RunRecord, front: CreateRunOptions): SubagentHost;
  /** One event published on a run's bus (the service's counter). */
  countEvent(): void;
}

export interface RunSpec {
  req: ParsedCreateRunRequest;
  plugin: Agent<Record<string, unknown>>;
  input: Record<string, unknown>;
  /** file inputs to copy into input/ (empty when rebuilding: they are there) */
  sources: Record<string, string>;
  skill: LoadedSkill | null;
  skills: LoadedSkill[];
  provider: ModelProvider;
  model: ModelChoice;
  goal: string;
  conversationId: string;
  tenantId: string | null;
  limits: RunLimits;
  reasoning: ReasoningEffort;
  capture: ResolvedCapture;
  sandbox: SandboxPolicy;
  /** what the request itself asked for (request.json keeps it as sent) */
  requested: { model: unknown; limits: Partial<RunLimits>; skill: string | null };
  trace: RunTraceContext;
  claw: string;
  depth: number;
  /** a rebuilt run's recorded file sources */
  sourcesRecorded?: Record<string, string>;
  trigger?: RunTrigger;
  webhook?: RunWebhook;
}

export function requestFile(runId: string, spec: RunSpec, createdAt: string): RequestFile & Record<string, unknown> {
  return {
    run_id: runId,
    plugin: spec.plugin.name,
    goal: spec.goal,
    input: spec.input,
    input_sources: spec.sourcesRecorded ?? spec.sources,
    model: spec.requested.model,
    limits: spec.requested.limits,
    reasoning: spec.reasoning,
    skill: spec.requested.skill,
    conversation_id: spec.conversationId,
    tenant_id: spec.tenantId,
    trace: { trace_id: spec.trace.traceId, parent_span_id: spec.trace.parentSpanId },
    created_at: createdAt,
    skill_active: spec.skill?.manifest.name ?? null,
    resolved: {
      model_spec: spec.model.spec ?? null,
      model_cwd: spec.model.cwd,
      limits: spec.limits,
      claw: spec.claw,
      capture: spec.capture,
      sandbox: spec.sandbox,
    },
  };
}

/**
 * A run's record: its workspace, tools, capability snapshot, bus, event log and state machine.
 * `resume` is set when a worker claims a run another node created: its status and events exist.
 */
export async function prepareRun(
  host: PreparationHost,
  runId: string,
  spec: RunSpec,
  parent: ParentLink | null,
  resume: { status: RunStatusFile; lastSeq: number } | null,
): Promise<RunRecord> {
  const { plugin, input, sources, skill, skills, provider, goal, conversationId, limits, depth } = spec;
  const workspace = new RunWorkspace(host.runsDir, runId, {
    readScopes: skill?.manifest.read_scopes,
    writeScopes: skill?.manifest.write_scopes,
  });
  // input values handed to tools are the workspace copies
  for (const [key, abs] of Object.entries(sources)) input[key] = `input/${safeInputName(abs)}`;
  let busRef: AgentEventBus | null = null;
  // the machine's listener and the tools' host need the record, which needs them
  let recRef: RunRecord | null = null;
  const ctx: AgentRunContext<Record<string, unknown>> = {
    runId,
    input,
    goal,
    workspace,
    notice: (text) => void busRef?.publish('run', { type: 'notice', text: String(text) }),
    skills,
    // run://<child_run_id>/artifacts/<path>: what this run's subagents wrote
    schemes: { run: (rest) => host.childArtifact(recRef, rest) },
  };
  let tools: AnyToolDefinition[];
  let toolSources: ToolSource[];
  try {
    tools = plugin.createTools(ctx);
    toolSources = plugin.createToolSources?.(ctx) ?? [];
  } catch (e) {
    fail('incompatible', `plugin ${plugin.name} could not create its tools: ${(e as Error).message}`);
  }
  if (skill) {
    const reasons = skillIncompatibilities(skill.manifest, {
      plugin: plugin.name,
      tools: tools.map((t) => t.name),
      inputKeys: Object.keys(input).filter((k) => input[k] !== undefined),
    });
    if (reasons.length) fail('incompatible', reasons.join('; '), { issues: reasons.map((r) => ({ path: 'skill', message: r })) });
  }
  if (plugin.agents?.length)
    tools.push(
      createRunAgentTool({ agents: plugin.agents, depth, timeoutMs: limits.timeout_s * 1000, host: host.subagentHost(() => recRef!, { claw: spec.claw }) }),
    );
  const capabilities = resolveCapabilities({
    plugin,
    skill: skill?.manifest ?? null,
    toolNames: [...tools.map((t) => t.name), ...toolSources.flatMap((s) => s.grants)],
  });

  // the workspace, the bus and the event log
  await workspace.createDirs();
  for (const [key, abs] of Object.entries(sources)) input[key] = await workspace.importInput(abs, safeInputName(abs));
  const bus = new AgentEventBus({ runId, ...(resume ? { startSeq: resume.lastSeq } : {}) });
  busRef = bus;
  const store = host.store.openLog(runId, workspace.root);
  bus.subscribe((e) => store.append(e));
  bus.subscribe(() => host.countEvent());
  const rawLog = createRawStreamLogger({ dataDir: host.dataDir, env: host.env });
  if (rawLog) bus.subscribe(rawLog);
  const createdAtMs = resume ? Date.parse(resume.status.created_at) : Date.now();
  const status: RunStatusFile = resume?.status ?? {
    run_id: runId,
    status: 'queued',
    plugin: plugin.name,
    plugin_version: plugin.version,
    skill: skill?.manifest.name ?? null,
    goal,
    conversation_id: conversationId,
    provider: provider.provider,
    model: provider.model,
    created_at: new Date(createdAtMs).toISOString(),
    started_at: null,
    finished_at: null,
    final_answer: '',
    diagnosis: null,
    last_seq: 0,
    public_documents: [],
    trace_id: spec.trace.traceId,
    ...(parent ? { parent_run_id: parent.rec.runId, parent_tool_call_id: parent.toolCallId } : {}),
    ...(spec.trigger ? { trigger: spec.trigger } : {}),
    ...(spec.tenantId ? { tenant_id: spec.tenantId } : {}),
  };
  // run_status.json writes go in order, the newest snapshot wins; the store lists runs by the live record;
  // a shared store's record is text that leaves this process too
  const statusWrites = new LatestWrite((s: RunStatusFile) => host.store.save(maskSecretsDeep(s), workspace));
  const statusWriter = new RunStatusWriter(status, (s) => {
    host.store.note(s);
    return statusWrites.write({ ...s });
  });
  // a terminal state is written with the run's final files (run-ending.ts), any other at once or folded by time
  const machine = new RunStateMachine(status.status, (from, to) => {
    statusWriter.moved(to, bus.lastSeq + 1);
    bus.publish('run', { type: 'run.state', from, to });
    if (isTerminalRunState(to)) statusWriter.dropFolded();
    else statusWriter.stateChanged(from, to);
  });
  let resolveDone!: (s: RunStatusFile) => void;
  const done = new Promise<RunStatusFile>((r) => (resolveDone = r));
  const rec: RunRecord = {
    runId,
    plugin,
    input,
    goal,
    conversationId,
    tenantId: spec.tenantId,
    skill,
    provider,
    limits,
    depth,
    children: [...(status.children ?? [])],
    grantedSkills: skills,
    reasoning: spec.reasoning,
    capture: spec.capture,
    sandbox: spec.sandbox,
    modelCalls: new ModelCallFeed(),
    workspace,
    bus,
    store,
    machine,
    status,
    statusWriter,
    history: await host.historyFor(conversationId),
    tools,
    ...(toolSources.length ? { toolSources } : {}),
    capabilities,
    request: requestFile(runId, spec, status.created_at),
    abort: new AbortController(),
    createdAtMs,
    done,
    resolveDone,
    usedSkills: [],
    durability: { checkpoint: plugin.durability !== 'interrupt' },
    inbox: new RunInbox((stream, data) => void bus.publish(stream, data)),
  };
  recRef = rec;
  for (const observe of host.observers ?? []) {
    // an observer (tracing) must never stop a run from starting
    try {
      observe({
        runId,
        plugin: plugin.name,
        tenantId: spec.tenantId,
        conversationId,
        claw: spec.claw,
        trace: spec.trace,
        bus,
        modelCalls: rec.modelCalls,
        ...(parent ? { parent: { runId: parent.rec.runId, toolCallId: parent.toolCallId } } : {}),
        ...(status.trigger ? { trigger: status.trigger } : {}),
        ...(spec.webhook ? { webhook: spec.webhook } : {}),
      });
    } catch {
      // it subscribes or it does not
    }
  }
  return rec;
}

export function safeInputName(abs: string): string {
  const base = abs.split(/[\\/]/).pop() ?? 'input';
  return base.replace(/[^A-Za-z0-9._-]/g, '_') || 'input';
}
