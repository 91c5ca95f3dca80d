/** Nothing lost when things break: disk errors, throwing hooks, many runs in a row. */
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import type { RunService } from '../../../src/runtime/service/run-service.js';
import { RunWorkspace } from '../../../src/runtime/storage/run-workspace.js';
import { z } from 'zod';
import { goodTurns, notesPlugin } from '../fixtures/fake-plugin.js';
import { FakeProvider } from '../fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../fixtures/setup.js';

let env: TestEnv;
let svc: RunService | null = null;
beforeEach(() => {
  env = makeEnv();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await svc?.close();
  svc = null;
  env.cleanup();
});

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
}

/** open file descriptors of this process that point into the test's data dir */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed while listing
    }
  }
  return out;
}

describe.skipIf(process.platform !== 'linux')('RunService: a create that fails on disk', () => {
  it('closes the events file it opened when writing the request fails (no fd leak per refused run)', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    await svc.init();
    const real = RunWorkspace.prototype.writeRunJson;
    vi.spyOn(RunWorkspace.prototype, 'writeRunJson').mockImplementation(function (this: RunWorkspace, rel: string, value: unknown) {
      if (rel === 'input/request.json') return Promise.reject(enospc());
      return real.call(this, rel, value);
    });
    for (let i = 0; i < 5; i++) {
      await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).rejects.toThrow(/ENOSPC/);
    }
    expect(openFilesUnder(env.dataDir)).toEqual([]);
    expect(svc.stats().running + svc.stats().queueDepth).toBe(0);
  });
});

function runEvents(runId: string): AgentEvent[] {
  return readFileSync(join(env.dataDir, 'runs', runId, 'runtime/events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AgentEvent);
}
function terminalTypes(runId: string): string[] {
  return runEvents(runId)
    .filter((e) => e.stream === 'run' && ['run.completed', 'run.failed', 'run.cancelled'].includes(e.data.type))
    .map((e) => (e.data as { type: string }).type);
}

describe('RunService: a run that breaks mid-way still ends with its terminal event', () => {
  for (const rel of ['runtime/skill_activation.json', 'runtime/agent_plan.json', 'runtime/todo_state.json', 'manifest.json', 'runtime/metrics.json']) {
    it(`ENOSPC on ${rel}`, async () => {
      svc = makeService(env, new FakeProvider(goodTurns()), { processRegistry: null });
      const real = RunWorkspace.prototype.writeRunJson;
      vi.spyOn(RunWorkspace.prototype, 'writeRunJson').mockImplementation(function (this: RunWorkspace, r: string, value: unknown) {
        if (r === rel) return Promise.reject(enospc());
        return real.call(this, r, value);
      });
      const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
      const st = await svc.wait(run_id);
      expect(['completed', 'failed']).toContain(st.status);
      expect(terminalTypes(run_id)).toHaveLength(1);
      const onDisk = JSON.parse(readFileSync(join(env.dataDir, 'runs', run_id, 'runtime/run_status.json'), 'utf8'));
      expect(onDisk.status).toBe(st.status);
      expect(onDisk.last_seq).toBe(runEvents(run_id).length);
    });
  }

  it('hooks, notices and text filters that throw', async () => {
    const boom = () => {
      throw new Error('boom');
    };
    for (const extra of [
      { hooks: { preToolUse: [{ name: 'bad', beforeTool: boom }] } },
      { hooks: { postToolUse: [{ name: 'bad', afterTool: boom }] } },
      { hooks: { stop: [{ name: 'bad', check: boom }] } },
      { processRegistry: { drainNotices: boom } },
      { processRegistry: { drainNotices: () => [], killScope: async () => boom() } },
      { createTextFilter: boom },
    ]) {
      const s = makeService(env, new FakeProvider(goodTurns()), extra as never);
      const { run_id } = await s.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
      const st = await s.wait(run_id);
      expect(['completed', 'failed'], JSON.stringify(Object.keys(extra))).toContain(st.status);
      expect(terminalTypes(run_id)).toHaveLength(1);
      await s.close();
    }
  });
});

describe('RunService: the final run_status.json', () => {
  it('is retried (with a notice) when its first write fails, so a finished run is not left looking live', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()), { processRegistry: null });
    const real = RunWorkspace.prototype.writeRunJson;
    let failed = 0;
    vi.spyOn(RunWorkspace.prototype, 'writeRunJson').mockImplementation(function (this: RunWorkspace, r: string, value: unknown) {
      if (r === 'runtime/run_status.json' && (value as { status: string }).status === 'completed' && failed++ === 0) return Promise.reject(enospc());
      return real.call(this, r, value);
    });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('completed');
    expect(failed).toBeGreaterThan(1);
    const onDisk = JSON.parse(readFileSync(join(env.dataDir, 'runs', run_id, 'runtime/run_status.json'), 'utf8'));
    expect(onDisk.status).toBe('completed');
    expect(onDisk.last_seq).toBe(runEvents(run_id).length);
    const notices = runEvents(run_id)
      .filter((e) => e.stream === 'run' && e.data.type === 'notice')
      .map((e) => (e.data as { text: string }).text);
    expect(notices.some((t) => t.includes('run_status.json') && t.includes('ENOSPC'))).toBe(true);
    expect(terminalTypes(run_id)).toEqual(['run.completed']);
  });
});

describe('RunService: many runs in a row', () => {
  it('200 runs leave no timers, handles, fds or process listeners behind', async () => {
    const s = makeService(env, () => new FakeProvider(goodTurns()), { concurrency: 4 });
    await s.init();
    // warm up once (lazy singletons)
    await s.wait((await s.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).run_id);
    const resources = () => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
    const listeners = () => process.eventNames().reduce((n, e) => n + process.listenerCount(e), 0);
    const before = { res: resources(), lis: listeners(), fds: openFilesUnder(env.dataDir).length };
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await s.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).run_id);
    for (const id of ids) expect((await s.wait(id)).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 50));
    expect(resources()).toBeLessThanOrEqual(before.res);
    expect(listeners()).toBe(before.lis);
    expect(openFilesUnder(env.dataDir).length).toBe(before.fds);
    expect(s.stats().running).toBe(0);
    await s.close();
  }, 60_000);
});

describe('RunService: live events equal the stored ones', () => {
  it('a tool that mutates its (nested) arguments does not change the tool-start event a slow live reader gets', async () => {
    const tag = {
      name: 'tag',
      description: 'tags a value',
      parameters: z.object({ meta: z.unknown() }),
      async execute(args: { meta: Record<string, unknown> }) {
        args.meta.seen = true; // a careless tool
        return { ok: true, content: 'tagged' };
      },
    };
    svc = makeService(env, new FakeProvider([{ toolCalls: [{ name: 'tag', args: { meta: { a: 1 } } }] }, ...goodTurns()]), {
      agents: [notesPlugin([tag as never])],
      processRegistry: null,
    });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const live: string[] = [];
    for await (const ev of svc.events(run_id)) {
      await new Promise((r) => setTimeout(r, 2)); // a slow client
      live.push(JSON.stringify(ev));
    }
    expect((await svc.wait(run_id)).status).toBe('completed');
    const stored = readFileSync(join(env.dataDir, 'runs', run_id, 'runtime/events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(live).toEqual(stored);
  });
});

describe('RunService: the queue under a burst', () => {
  it('maxQueue holds when many creates arrive at once (the check and the enqueue are apart by several awaits)', async () => {
    svc = makeService(env, () => new FakeProvider([{ hang: true }]), { concurrency: 1, maxQueue: 1, processRegistry: null });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => svc!.create({ plugin: 'notes', input: { notes_path: env.notesPath } })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code);
    expect(ok).toHaveLength(2); // one running, one waiting
    expect(refused).toEqual(Array(4).fill('queue_full'));
    expect(svc.stats()).toMatchObject({ running: 1, queueDepth: 1 });
    // refused runs leave no folder behind
    expect(readdirSync(join(env.dataDir, 'runs')).filter((n) => n.startsWith('run_'))).toHaveLength(2);
  });
});

describe('RunService: close() racing a create in flight', () => {
  it('a create that passed the closed-check before close() does not leave a run live after close() resolved', async () => {
    let closing: Promise<void> | null = null;
    const s = makeService(
      env,
      () => {
        closing ??= s.close(); // close() arrives while this create is between its checks and the enqueue
        return new FakeProvider([{ hang: true }]);
      },
      { processRegistry: null },
    );
    const created = s.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const outcome = await created.then(
      (st) => st.run_id,
      (e: { code?: string }) => e.code,
    );
    await closing;
    if (outcome === 'wrong_state') {
      // refused: its folder is given back
      expect(readdirSync(join(env.dataDir, 'runs')).filter((n) => n.startsWith('run_'))).toEqual([]);
      return;
    }
    const st = await s.get(outcome as string);
    expect(st?.status).toBe('cancelled');
    expect(s.stats().running).toBe(0);
  });
});

describe('RunService.init: one broken run folder', () => {
  it('does not make every later create/list fail when an interrupted run cannot be closed', async () => {
    const id = 'run_20200101_000000_000001';
    const root = join(env.dataDir, 'runs', id);
    mkdirSync(join(root, 'runtime', 'events.jsonl'), { recursive: true }); // unopenable as a file
    const status = {
      run_id: id,
      status: 'model_thinking',
      plugin: 'notes',
      plugin_version: '1.2.3',
      skill: null,
      goal: 'g',
      conversation_id: id,
      provider: 'fake',
      model: 'fake-1',
      created_at: '2020-01-01T00:00:00.000Z',
      started_at: null,
      finished_at: null,
      final_answer: '',
      diagnosis: null,
      last_seq: 3,
      public_documents: [],
    };
    writeFileSync(join(root, 'runtime', 'run_status.json'), JSON.stringify(status));
    svc = makeService(env, new FakeProvider(goodTurns()), { processRegistry: null });
    await svc.init();
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    // the broken run is not reported live
    const broken = await svc.get(id);
    expect(broken?.status).toBe('failed');
    expect(broken?.diagnosis?.code).toBe('interrupted');
    expect((await svc.list()).total).toBe(2);
  });
});

describe('RunService: cancel racing completion', () => {
  it('whenever cancel() lands, a run ends once: one terminal event, status file and wait() agree', async () => {
    const s = makeService(env, () => new FakeProvider(goodTurns()), { concurrency: 2, processRegistry: null });
    const ticks = (n: number) =>
      new Promise<void>((r) => {
        const step = (k: number) => (k <= 0 ? r() : setImmediate(() => step(k - 1)));
        step(n);
      });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { run_id } = await s.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
      ids.push(run_id);
      void ticks(i % 20).then(() => s.cancel(run_id).catch(() => undefined));
    }
    for (const id of ids) {
      const st = await s.wait(id);
      expect(['completed', 'cancelled']).toContain(st.status);
      const term = terminalTypes(id);
      expect(term, id).toEqual([`run.${st.status}`]);
      const onDisk = JSON.parse(readFileSync(join(env.dataDir, 'runs', id, 'runtime/run_status.json'), 'utf8'));
      expect(onDisk.status).toBe(st.status);
      expect(onDisk.last_seq).toBe(runEvents(id).length);
    }
    await s.close();
  }, 30_000);
});

describe('AgentLoop: a model stream left early', () => {
  it('is closed (return()) when the loop stops reading it at an error part, so the provider can release its connection', async () => {
    let closed = 0;
    let calls = 0;
    const provider = {
      provider: 'fake',
      model: 'fake-1',
      async *stream() {
        calls++;
        try {
          yield { type: 'error' as const, diagnosis: { code: 'rate_limited', severity: 'error' as const, summary: 'slow down', retryable: calls < 3 } };
          yield { type: 'text-delta' as const, text: 'never read' };
        } finally {
          closed++;
        }
      },
    };
    svc = makeService(env, provider as never, { processRegistry: null });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('failed');
    expect(calls).toBe(3);
    expect(closed).toBe(3);
  });
});

describe('RunService: a bug inside finalise', () => {
  it('does not leave wait()/close() hanging or the run looking live', async () => {
    const { EventStore } = await import('../../../src/runtime/storage/event-store.js');
    const realClose = EventStore.prototype.close;
    vi.spyOn(EventStore.prototype, 'close').mockImplementationOnce(function (this: InstanceType<typeof EventStore>) {
      realClose.call(this);
      throw new Error('EIO: i/o error, close');
    });
    svc = makeService(env, new FakeProvider(goodTurns()), { processRegistry: null });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await Promise.race([svc.wait(run_id), new Promise<null>((r) => setTimeout(() => r(null), 2000))]);
    expect(st).not.toBeNull();
    expect(['completed', 'failed']).toContain(st!.status);
    expect(svc.stats().running).toBe(0);
    const onDisk = JSON.parse(readFileSync(join(env.dataDir, 'runs', run_id, 'runtime/run_status.json'), 'utf8'));
    expect(onDisk.status).toBe(st!.status);
  });
});

describe('RunService: creates that throw do not use up the queue', () => {
  it('plugin createTools, the provider resolver and the disk throwing leave every slot free', async () => {
    let mode: 'tools' | 'provider' | 'disk' | 'ok' = 'tools';
    const plugin = notesPlugin();
    const createTools = plugin.createTools.bind(plugin);
    plugin.createTools = (ctx) => {
      if (mode === 'tools') throw new Error('no tools today');
      return createTools(ctx);
    };
    svc = makeService(
      env,
      () => {
        if (mode === 'provider') throw new Error('provider constructor failed');
        return new FakeProvider(goodTurns());
      },
      { agents: [plugin], concurrency: 1, maxQueue: 0, processRegistry: null },
    );
    const real = RunWorkspace.prototype.writeRunJson;
    vi.spyOn(RunWorkspace.prototype, 'writeRunJson').mockImplementation(function (this: RunWorkspace, r: string, value: unknown) {
      if (mode === 'disk' && r === 'input/request.json') return Promise.reject(enospc());
      return real.call(this, r, value);
    });
    for (const m of ['tools', 'provider', 'disk'] as const) {
      mode = m;
      for (let i = 0; i < 3; i++) await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).rejects.toBeInstanceOf(Error);
    }
    mode = 'ok';
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    expect(readdirSync(join(env.dataDir, 'runs')).filter((n) => n.startsWith('run_'))).toEqual([run_id]);
  });
});

describe('RunService: background processes that will not end', () => {
  it('a killScope that never settles does not keep the run from ending', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()), {
      processRegistry: { drainNotices: () => [], killScope: () => new Promise<void>(() => {}) },
      killScopeTimeoutMs: 50,
    });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await Promise.race([svc.wait(run_id), new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
    expect(st?.status).toBe('completed');
    expect(terminalTypes(run_id)).toEqual(['run.completed']);
    const notices = runEvents(run_id)
      .filter((e) => e.stream === 'run' && e.data.type === 'notice')
      .map((e) => (e.data as { text: string }).text);
    expect(notices.some((t) => t.includes('background processes'))).toBe(true);
  });
});

describe('RunService.init: a run whose terminal event is on disk but whose final status is not', () => {
  it('takes the outcome from the terminal event instead of appending a second (interrupted) one', async () => {
    const s1 = makeService(env, new FakeProvider(goodTurns()), { processRegistry: null });
    const { run_id } = await s1.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await s1.wait(run_id)).status).toBe('completed');
    await s1.close();
    // the final run_status.json write was lost (disk full then): the file still says validating
    const statusFile = join(env.dataDir, 'runs', run_id, 'runtime/run_status.json');
    const final = JSON.parse(readFileSync(statusFile, 'utf8'));
    writeFileSync(statusFile, JSON.stringify({ ...final, status: 'validating', finished_at: null, final_answer: '' }));
    svc = makeService(env, new FakeProvider([]), { processRegistry: null });
    await svc.init();
    const st = await svc.get(run_id);
    expect(st?.status).toBe('completed');
    expect(st?.final_answer).toBe('Done: 3 notes.');
    expect(terminalTypes(run_id)).toEqual(['run.completed']);
    expect(JSON.parse(readFileSync(statusFile, 'utf8')).status).toBe('completed');
  });
});
