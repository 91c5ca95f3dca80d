/** A small in-memory RunServiceApi for server tests: scripted runs on a real AgentEventBus. */
import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import type { AgentEvent, RunStatus } from '../../src/events/agent-event.js';
import type { RunServiceApi, RunStatusFile, RunListQuery, RunServiceStats } from '../../src/runtime/run-service-types.js';

export class FakeRunError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface FakeScript {
  /** assistant deltas to stream */
  deltas: string[];
  /** pause after this many deltas until release(runId) */
  pauseAfter?: number;
  /** a tool step with a process event before the text */
  tool?: boolean;
  fail?: boolean;
}

interface FakeRun {
  status: RunStatusFile;
  bus: AgentEventBus;
  history: AgentEvent[];
  listeners: Set<() => void>;
  release?: () => void;
  done: Promise<void>;
}

const TERMINAL = new Set<RunStatus>(['completed', 'failed', 'cancelled']);

export class FakeRunService implements RunServiceApi {
  readonly runs = new Map<string, FakeRun>();
  documents = new Map<string, string>();
  scriptFor: (req: Record<string, unknown>) => FakeScript = () => ({ deltas: ['Hello', ', ', 'world'], tool: true });
  maxRuns = Infinity;
  private n = 0;

  async create(req: unknown): Promise<RunStatusFile> {
    const r = (req ?? {}) as Record<string, unknown>;
    if (typeof r.plugin !== 'string') throw new FakeRunError('invalid_request', 400, 'plugin: required', { issues: [{ path: 'plugin', message: 'required' }] });
    if (!['echo', 'chat', 'files'].includes(r.plugin))
      throw new FakeRunError('unknown_plugin', 404, `unknown plugin ${r.plugin}`, { validPlugins: ['echo', 'chat', 'files'] });
    if (r.skill === 'wrong') throw new FakeRunError('incompatible', 422, 'skill wrong is not compatible with echo');
    if (this.runs.size >= this.maxRuns) throw new FakeRunError('queue_full', 429, 'queue is full');
    const runId = `run_20260101_000000_${String(++this.n).padStart(6, '0')}`;
    const status: RunStatusFile = {
      run_id: runId,
      status: 'queued',
      plugin: r.plugin,
      plugin_version: '1.0.0',
      skill: null,
      goal: typeof r.goal === 'string' ? r.goal : '',
      conversation_id: typeof r.conversation_id === 'string' ? r.conversation_id : runId,
      provider: 'script',
      model: 'fake',
      created_at: new Date().toISOString(),
      started_at: null,
      finished_at: null,
      final_answer: '',
      diagnosis: null,
      last_seq: 0,
      public_documents: [],
      ...(typeof r.tenant_id === 'string' ? { tenant_id: r.tenant_id } : {}),
    };
    const bus = new AgentEventBus({ runId });
    const run: FakeRun = { status, bus, history: [], listeners: new Set(), done: Promise.resolve() };
    bus.subscribe((ev) => {
      run.history.push(ev);
      run.status.last_seq = ev.seq;
      for (const l of run.listeners) l();
    });
    this.runs.set(runId, run);
    run.done = this.play(run, this.scriptFor(r), r);
    return { ...status };
  }

  release(runId: string): void {
    this.runs.get(runId)?.release?.();
  }

  private setState(run: FakeRun, to: RunStatus): void {
    const from = run.status.status;
    run.status.status = to;
    run.bus.publish('run', { type: 'run.state', from, to });
  }

  private async play(run: FakeRun, script: FakeScript, req: Record<string, unknown>): Promise<void> {
    await new Promise((r) => setImmediate(r));
    const { bus } = run;
    bus.publish('run', {
      type: 'run.created',
      runId: run.status.run_id,
      plugin: run.status.plugin,
      goal: run.status.goal,
      conversationId: run.status.conversation_id,
    });
    this.setState(run, 'model_thinking');
    bus.publish('lifecycle', { phase: 'start', startedAt: Date.now() });
    if (script.tool) {
      bus.publish('tool', { phase: 'start', name: 'read_input', toolCallId: 'c1', args: { path: 'input/x.csv' } });
      bus.publish('process', {
        event: {
          operationId: 'op1',
          targetType: 'tool',
          source: 'tool',
          stage: 'read',
          status: 'running',
          level: 'info',
          current: 1,
          total: 2,
          percent: 50,
          ts: Date.now(),
        },
      });
      bus.publish('tool', { phase: 'result', name: 'read_input', toolCallId: 'c1', isError: false, result: '{"rows":2}' });
    }
    let text = '';
    for (let i = 0; i < script.deltas.length; i++) {
      if ((run.status.status as RunStatus) === 'cancelled') return;
      if (script.pauseAfter !== undefined && i === script.pauseAfter) {
        await new Promise<void>((r) => (run.release = r));
        if ((run.status.status as RunStatus) === 'cancelled') return;
      }
      text += script.deltas[i];
      bus.publish('assistant', { phase: 'update', text, delta: script.deltas[i] });
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    bus.publish('assistant', { phase: 'end', text, delta: '' });
    const final = script.fail ? 'failed' : 'completed';
    run.status.final_answer = text;
    run.status.finished_at = new Date().toISOString();
    run.status.public_documents = [
      { path: 'artifacts/report.md', audience: 'user', sensitivity: 'public', type: 'markdown', description: 'the report', bytes: 10 },
    ];
    this.setState(run, final);
    bus.publish('run', {
      type: final === 'completed' ? 'run.completed' : 'run.failed',
      status: final,
      messageId: `msg_${run.status.run_id}`,
      conversationId: run.status.conversation_id,
      content: text,
      usedSkills: [],
      usedMcp: [],
      ...(script.fail ? { diagnosis: { code: 'boom', severity: 'error' as const, summary: 'it broke', detail: '', hint: '', retryable: false } } : {}),
    });
    void req;
  }

  async get(runId: string): Promise<RunStatusFile | null> {
    const r = this.runs.get(runId);
    return r ? { ...r.status } : null;
  }

  async list(q: RunListQuery = {}): Promise<{ runs: RunStatusFile[]; total: number }> {
    let all = [...this.runs.values()].map((r) => ({ ...r.status })).reverse();
    if (q.status) all = all.filter((r) => r.status === q.status);
    if (q.statuses) all = all.filter((r) => q.statuses!.includes(r.status));
    if (q.plugin) all = all.filter((r) => r.plugin === q.plugin);
    if (q.tenant !== undefined) all = all.filter((r) => (r.tenant_id || 'default') === q.tenant);
    const off = q.offset ?? 0;
    return { runs: all.slice(off, off + (q.limit ?? 50)), total: all.length };
  }

  async cancel(runId: string): Promise<RunStatusFile> {
    const r = this.runs.get(runId);
    if (!r) throw new FakeRunError('not_found', 404, `no run ${runId}`);
    if (TERMINAL.has(r.status.status)) throw new FakeRunError('wrong_state', 409, `run ${runId} is ${r.status.status}`);
    this.setState(r, 'cancelled');
    r.bus.publish('run', {
      type: 'run.cancelled',
      status: 'cancelled',
      messageId: 'm',
      conversationId: r.status.conversation_id,
      content: '',
      usedSkills: [],
      usedMcp: [],
    });
    r.release?.();
    return { ...r.status };
  }

  async *events(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    const run = this.runs.get(runId);
    if (!run) return;
    let i = opts.after ?? 0; // history index: seq n is history[n-1]
    for (;;) {
      while (i < run.history.length) {
        const ev = run.history[i++];
        yield ev;
        if (
          ev.stream === 'run' &&
          'status' in ev.data &&
          (ev.data.type === 'run.completed' || ev.data.type === 'run.failed' || ev.data.type === 'run.cancelled')
        )
          return;
      }
      if (opts.signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          run.listeners.delete(wake);
          opts.signal?.removeEventListener('abort', wake);
          resolve();
        };
        run.listeners.add(wake);
        opts.signal?.addEventListener('abort', wake);
      });
      if (opts.signal?.aborted) return;
    }
  }

  async manifest(runId: string): Promise<unknown | null> {
    const r = this.runs.get(runId);
    return r && TERMINAL.has(r.status.status) ? { run_id: runId, status: r.status.status, documents: r.status.public_documents } : null;
  }

  async documentPath(runId: string, relPath: string): Promise<string | null> {
    return this.documents.get(`${runId}/${relPath}`) ?? null;
  }

  async wait(runId: string): Promise<RunStatusFile> {
    const r = this.runs.get(runId);
    if (!r) throw new FakeRunError('not_found', 404, 'no run');
    await r.done;
    return { ...r.status };
  }

  stats(): RunServiceStats {
    const byState: Partial<Record<RunStatus, number>> = {};
    for (const r of this.runs.values()) byState[r.status.status] = (byState[r.status.status] ?? 0) + 1;
    return { byState, queueDepth: 0, running: 0, eventsPublished: [...this.runs.values()].reduce((a, r) => a + r.history.length, 0) };
  }

  async close(): Promise<void> {}
}
