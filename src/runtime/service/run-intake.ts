/**
 * Intake: a request becomes a run. The admission checks (run-admission.ts), a place within the queue's
 * capacity, a run id (its folder reserved), the run's record (run-preparation.ts through the host), its
 * first events and files (request, owner, status), then the queue — or, for a subagent, the host starts
 * it at once beside its parent's slot. A request refused at any step leaves no folder and no record.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runTraceContext } from '../../events/trace-context.js';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy.js';
import { pinnedRunPolicy } from '../../sandbox/sandbox-paths.js';
import { DEFAULT_LIMITS } from '../loop/agent-loop.js';
import type { AgentSource } from '../agent-registry.js';
import type { Agent } from '../agent.js';
import { resolveCapture } from '../model-calls/capture-settings.js';
import {
  activeSkill,
  checkedInput,
  checkInputFiles,
  checkRequestedLimits,
  chooseModel,
  fileInputSources,
  grantedSkills,
  ownLimits,
  parseRunRequest,
  agentOf,
  providerFor,
  type ProviderResolver,
} from './run-admission.js';
import type { RunHost } from './run-host.js';
import type { ParentLink, RunSpec } from '../run/run-preparation.js';
import type { RunQueue } from './run-queue.js';
import type { RunRecord } from '../run/run-record.js';
import { createRunId } from '../storage/run-id.js';
import type { CreateRunOptions, RunStatusFile } from '../run-service-types.js';
import type { RunServiceDefaults } from './run-service-options.js';
import type { RunStore } from '../storage/run-store.js';
import { reserveRunFolder } from '../storage/run-workspace.js';
import { fail } from '../errors.js';

export interface RunIntakeOptions {
  host: RunHost;
  queue: RunQueue;
  store: RunStore;
  registry: AgentSource;
  runsDir: string;
  skillDirs: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  /** Relative sandbox paths resolve here (the project folder, not the working folder of a CLI). */
  projectDir: string;
  /** Folders no sandbox path may reach (the data dir, `<project>/.runtrail`). */
  protectedDirs: string[];
  /** Where file inputs may come from: 'any' (the CLI) or folders. */
  inputRoots: string[] | 'any';
  resolver: ProviderResolver;
  defaults: () => RunServiceDefaults;
  /** Runs allowed to wait for a slot (named in the queue_full refusal). */
  maxQueue: number;
  /** Whether the service is closed (then no run is taken in). */
  gate: { readonly closed: boolean };
}

export class RunIntake {
  /** Accepted creates not yet queued (between the capacity check and the enqueue there are awaits). */
  private reserving = 0;

  constructor(private readonly o: RunIntakeOptions) {}

  /** The admission steps, then the run; a subagent's (`parent` set) reads its file inputs from the
   *  parent's run folder and starts at once, beside the queue its parent holds a slot of. */
  async admit(raw: unknown, opts: CreateRunOptions, parent: ParentLink | null): Promise<RunStatusFile> {
    const o = this.o;
    if (o.gate.closed) fail('wrong_state', 'the run service is closed');
    const req = parseRunRequest(raw, o.registry);
    const plugin = agentOf(req, o.registry);
    const input = checkedInput(plugin, req);
    const scope = parent ? { cwd: parent.rec.workspace.root, inputRoots: [parent.rec.workspace.root] } : { cwd: o.cwd, inputRoots: o.inputRoots };
    const sources = fileInputSources(plugin, input, scope);
    await checkInputFiles(plugin, input, sources);
    const skill = await activeSkill(plugin, req, o.skillDirs);
    const skills = await grantedSkills(plugin, o.skillDirs);
    const defaults = o.defaults();
    if (opts.fromNetwork) checkRequestedLimits(req.limits, ownLimits(plugin, defaults.limits), defaults.request_limits);
    const model = chooseModel(plugin, req, { cwd: o.cwd, env: o.env, ...(defaults.model ? { defaultModel: defaults.model } : {}) });
    const provider = providerFor(plugin, model, { env: o.env, resolver: o.resolver });
    // step 7, capacity: running + waiting + accepted-but-not-yet-queued (concurrent creates) within concurrency + maxQueue
    // several nodes: nothing is written while the database is away (the API answers 503)
    await o.store.ping?.();
    if (!parent && !(await o.queue.hasRoom(this.reserving))) {
      fail('queue_full', `the run queue is full (${o.maxQueue} waiting); try again later`, { maxQueue: o.maxQueue });
    }

    this.reserving++;
    let counted = true;
    const unreserve = () => {
      if (counted) this.reserving--;
      counted = false;
    };
    let runId: string | null = null;
    try {
      runId = await reserveRunFolder(o.runsDir, createRunId);
      return await this.createReserved(runId, { req, plugin, input, sources, skill, skills, provider, model }, unreserve, opts, parent);
    } catch (e) {
      unreserve();
      // the run never started: give its id back, and leave no record of it (no phantom `queued` run)
      if (runId) {
        o.host.drop(runId);
        await o.store.forget(runId).catch(() => undefined);
        await rm(join(o.runsDir, runId), { recursive: true, force: true }).catch(() => undefined);
      }
      throw e;
    }
  }

  /** The run's sandbox with its paths pinned; a path reaching Runtrail's own folders refuses the run (400, CLI exit 2). */
  private sandboxOf(operator: RunServiceDefaults['sandbox'], plugin: Agent): SandboxPolicy {
    const pinned = pinnedRunPolicy(operator, plugin.sandbox, { projectDir: this.o.projectDir, protectedDirs: this.o.protectedDirs, agentName: plugin.name });
    if (!pinned.ok) fail('invalid_request', `${pinned.refused.field}: ${pinned.refused.message}`, { field: pinned.refused.field, value: pinned.refused.value });
    return pinned.policy;
  }

  private async createReserved(
    runId: string,
    p: Pick<RunSpec, 'req' | 'plugin' | 'input' | 'sources' | 'skill' | 'skills' | 'provider' | 'model'>,
    /** called just before the run joins the queue (it then counts there) */
    onQueued: () => void,
    front: CreateRunOptions,
    parent: ParentLink | null,
  ): Promise<RunStatusFile> {
    const { req, plugin } = p;
    const defaults = this.o.defaults();
    const spec: RunSpec = {
      ...p,
      goal: req.goal?.trim() ? req.goal.trim() : plugin.defaultGoal,
      // a subagent works in its parent's conversation
      conversationId: parent?.rec.conversationId ?? req.conversation_id ?? runId,
      // a subagent belongs to its parent's tenant, whatever its request says
      tenantId: parent ? parent.rec.tenantId : (req.tenant_id ?? null),
      limits: { ...DEFAULT_LIMITS, ...defaults.limits, ...plugin.limits, ...(req.limits ?? {}) },
      reasoning: req.reasoning ?? 'off',
      capture: resolveCapture(defaults.capture, plugin.capture),
      // relative read/write paths are the project's: pinned here, so the run's record holds them as they apply
      sandbox: this.sandboxOf(defaults.sandbox, plugin),
      requested: { model: req.model ?? null, limits: req.limits ?? {}, skill: req.skill ?? null },
      // a subagent is part of its parent's trace: its run span goes under the parent's invoke_agent span
      trace: parent
        ? { traceId: parent.rec.status.trace_id || runTraceContext().traceId, parentSpanId: null, sampled: true }
        : runTraceContext(front.traceparent),
      claw: front.claw ?? '',
      depth: parent ? parent.rec.depth + 1 : 1,
      ...(front.trigger ? { trigger: front.trigger } : {}),
      ...(front.webhook ? { webhook: front.webhook } : {}),
    };
    const rec = await this.o.host.prepare(runId, spec, parent, null);
    return this.announce(rec, onQueued, parent);
  }

  /** A new run made known: input/request.json, its first events, its status, then the queue (or, for a
   *  subagent, started at once). A shared queue's worker rebuilds the run from these files. */
  private async announce(rec: RunRecord, onQueued: () => void, parent: ParentLink | null): Promise<RunStatusFile> {
    const { host, queue } = this.o;
    const { runId, workspace, store, bus, status, plugin } = rec;
    if (this.o.gate.closed) {
      // close() came while this create was on its way: it cancelled the live runs it saw, so this one
      // must not start after it (create() removes the folder); the refusal returns once its events
      // file is closed, so no refused run holds a descriptor
      store.close();
      await store.settled?.();
      fail('wrong_state', 'the run service is closed');
    }
    bus.publish('run', {
      type: 'run.created',
      runId,
      plugin: plugin.name,
      goal: rec.goal,
      conversationId: rec.conversationId,
      ...(status.trigger ? { trigger: status.trigger } : {}),
    });
    rec.statusWriter.moved('queued', bus.lastSeq + 1);
    bus.publish('run', { type: 'run.state', from: null, to: 'queued' });
    this.o.store.note(status);
    const here = parent !== null || !queue.shared;
    // the request file, the owner and the status in one round of writes; a run whose request file cannot
    // be written is refused (create removes its folder), a status write that fails is retried by the next
    const statusWritten = rec.statusWriter.save().catch(() => undefined);
    try {
      await Promise.all([workspace.folder.writeRequest(rec.request), workspace.folder.writeOwner(), statusWritten]);
    } catch (e) {
      store.close();
      // the run never existed: its status (in memory, in a shared store) goes with its folder, and its
      // events file is closed (fsync and close run off the main thread) before the refusal returns
      await Promise.all([statusWritten, store.settled?.()]);
      await this.o.store.forget(runId).catch(() => undefined);
      throw e;
    }
    // a worker elsewhere will claim it: this node keeps nothing of it open
    if (here) host.hold(rec);
    if (!here) {
      store.close();
      await store.settled?.();
    }
    onQueued();
    const snapshot = { ...status };
    if (parent) {
      parent.rec.children.push(runId);
      void parent.rec.statusWriter.children(parent.rec.children).catch(() => undefined);
      host.startBeside(rec);
      return snapshot;
    }
    try {
      await queue.enqueue(runId);
    } catch (e) {
      // the run is in the shared store as queued: the reconciler enqueues it once the queue is back
      if (!queue.shared) throw e;
    }
    return snapshot;
  }
}
