import { afterEach, describe, expect, it } from 'vitest';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { createProcessTool } from '../../src/tools/process-tool.js';
import { liveProcesses, marker, ownWorkdir } from './helpers.js';

const WORKDIR = ownWorkdir();

let registry: ProcessRegistry;
afterEach(async () => {
  await registry?.shutdown();
});

function setup(scopeKey = 'run_a', reg?: ProcessRegistry) {
  registry = reg ?? registry ?? new ProcessRegistry();
  return {
    exec: createExecTool({ registry, scopeKey, cwd: WORKDIR }),
    proc: createProcessTool({ registry, scopeKey }),
  };
}

async function startBg(exec: ReturnType<typeof setup>['exec'], command: string): Promise<string> {
  const r = await exec.execute({ command, background: true });
  expect(r.details?.status).toBe('running');
  return r.details?.sessionId as string;
}

describe('process tool', () => {
  it('poll returns only new output since the last poll, then the exit status', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, 'echo one; read x; echo two $x');
    const p1 = await proc.execute({ action: 'poll', sessionId: id, waitMs: 5000 });
    expect(p1.content).toContain('one');
    expect(p1.content).toContain('still running');
    await proc.execute({ action: 'write', sessionId: id, data: 'three\n' });
    const p2 = await proc.execute({ action: 'poll', sessionId: id, waitMs: 5000 });
    let text = p2.content;
    if (!/exited/.test(text)) text += (await proc.execute({ action: 'poll', sessionId: id, waitMs: 5000 })).content;
    expect(text).toContain('two three');
    expect(text).not.toContain('one');
    expect(text).toMatch(/Process exited with code 0 after \d+\.\d s\./);
  });

  it('poll waits up to waitMs and no longer than 30 s', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, `sleep ${marker()}`);
    const p = await proc.execute({ action: 'poll', sessionId: id, waitMs: 50 });
    expect(p.content).toContain('(no new output)');
    expect(p.details?.status).toBe('running');
  });

  it('poll flags unpolled output that was cut', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry({ pendingMaxOutputChars: 100 }));
    const id = await startBg(exec, 'seq 1 5000');
    await registry.get('run_a', id)?.done;
    const p = await proc.execute({ action: 'poll', sessionId: id });
    expect(p.details?.pendingTruncated).toBe(true);
    expect(p.content).toMatch(/earlier bytes of unpolled stdout were cut/);
    expect(p.content).toContain('5000');
  });

  it('log pages by line: last 200 by default, offset/limit otherwise', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, 'seq 1 500');
    await registry.get('run_a', id)?.done;
    const last = await proc.execute({ action: 'log', sessionId: id });
    expect(last.details).toMatchObject({ offset: 300, lines: 200, totalLines: 500 });
    expect(last.content).toMatch(/showing lines 300–499 of 500/);
    const page = await proc.execute({ action: 'log', sessionId: id, offset: 10, limit: 3 });
    expect(page.content.split('\n').slice(0, 3)).toEqual(['11', '12', '13']);
    const rest = await proc.execute({ action: 'log', sessionId: id, offset: 495 });
    expect(rest.details).toMatchObject({ lines: 5 });
    const lastN = await proc.execute({ action: 'log', sessionId: id, limit: 2 });
    expect(lastN.content.split('\n').slice(0, 2)).toEqual(['499', '500']);
  });

  it('write with eof closes stdin', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, 'cat | wc -l');
    await proc.execute({ action: 'write', sessionId: id, data: 'a\nb\n', eof: true });
    await registry.get('run_a', id)?.done;
    const p = await proc.execute({ action: 'poll', sessionId: id });
    expect(p.content.trim().split('\n')[0].trim()).toBe('2');
  });

  it('kill ends the group; clear and remove drop sessions', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const m = marker();
    const id = await startBg(exec, `sleep ${m}`);
    const k = await proc.execute({ action: 'kill', sessionId: id });
    expect(k.ok).toBe(true);
    expect(k.details?.status).toBe('failed');
    expect(liveProcesses(m)).toEqual([]);
    expect((await proc.execute({ action: 'clear', sessionId: id })).ok).toBe(true);
    expect((await proc.execute({ action: 'poll', sessionId: id })).diagnosis?.code).toBe('process_unknown_session');

    const m2 = marker();
    const id2 = await startBg(exec, `sleep ${m2}`);
    const rm = await proc.execute({ action: 'remove', sessionId: id2 });
    expect(rm.content).toContain('Killed and removed');
    expect(liveProcesses(m2)).toEqual([]);
    expect((await proc.execute({ action: 'list' })).content).toBe('No background sessions in this run.');
  });

  it('one run cannot see or touch another run’s sessions', async () => {
    const reg = new ProcessRegistry();
    const a = setup('run_a', reg);
    const b = setup('run_b', reg);
    const id = await startBg(a.exec, `sleep ${marker()}`);
    expect((await b.proc.execute({ action: 'list' })).details?.sessions).toEqual([]);
    for (const action of ['poll', 'log', 'write', 'kill', 'clear', 'remove'] as const) {
      const r = await b.proc.execute({ action, sessionId: id, data: 'x' });
      expect(r.ok, action).toBe(false);
      expect(r.diagnosis?.code).toBe('process_unknown_session');
    }
    expect(registry.get('run_a', id)?.running).toBe(true);
  });

  it('killScope ends every session of a run and only that run', async () => {
    const reg = new ProcessRegistry();
    const a = setup('run_a', reg);
    const b = setup('run_b', reg);
    const ma = marker();
    const mb = marker();
    await startBg(a.exec, `sleep ${ma}`);
    await startBg(b.exec, `sleep ${mb}`);
    await reg.killScope('run_a');
    expect(liveProcesses(ma)).toEqual([]);
    expect(liveProcesses(mb).length).toBeGreaterThan(0);
    expect((await a.proc.execute({ action: 'list' })).details?.sessions).toEqual([]);
    await reg.shutdown();
    expect(liveProcesses(mb)).toEqual([]);
    await expect(reg.start({ scopeKey: 'x', command: 'true', cwd: WORKDIR, env: {} })).rejects.toThrow(/shut down/);
  });

  it('keeps at most the configured number of finished sessions, oldest dropped first', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry({ maxFinishedSessions: 3 }));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await startBg(exec, `echo ${i}`);
      await registry.get('run_a', id)?.done;
      ids.push(id);
    }
    const listed = ((await proc.execute({ action: 'list' })).details?.sessions as Array<{ sessionId: string }>).map((s) => s.sessionId);
    expect(listed).toEqual(ids.slice(2));
  });

  it('drops finished sessions after the TTL', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, 'echo x');
    await registry.get('run_a', id)?.done;
    registry.sweep(Date.now() + registry.limits.jobTtlMs + 1);
    expect((await proc.execute({ action: 'poll', sessionId: id })).ok).toBe(false);
  });
});

describe('process tool bad input', () => {
  it('unknown session ids get a clear error', async () => {
    const { proc } = setup('run_a', new ProcessRegistry());
    const r = await proc.execute({ action: 'poll', sessionId: 'exec_nope' });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/no session "exec_nope" in this run/);
  });

  it('a missing sessionId or unknown action is refused', async () => {
    const { proc } = setup('run_a', new ProcessRegistry());
    expect((await proc.execute({ action: 'kill' })).content).toMatch(/needs a sessionId/);
    expect((await proc.execute({ action: 'explode' } as unknown as { action: 'list' })).content).toMatch(/invalid arguments/);
  });

  it('write to a finished session is refused', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, 'true');
    await registry.get('run_a', id)?.done;
    const r = await proc.execute({ action: 'write', sessionId: id, data: 'x' });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/has finished/);
  });

  it('clear on a running session is refused, and kill on a finished one', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const id = await startBg(exec, `sleep ${marker()}`);
    const r = await proc.execute({ action: 'clear', sessionId: id });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/still running/);
    await proc.execute({ action: 'kill', sessionId: id });
    const k = await proc.execute({ action: 'kill', sessionId: id });
    expect(k.ok).toBe(false);
    expect(k.content).toMatch(/already finished/);
  });
});

describe('process tool with a pty session', () => {
  it('write reaches a program reading the terminal', async () => {
    const { exec, proc } = setup('run_a', new ProcessRegistry());
    const r = await exec.execute({ command: 'read x; echo "got:$x"', pty: true, background: true });
    const id = r.details?.sessionId as string;
    if (!r.details?.pty) return expect(r.details?.warning).toMatch(/pty unavailable/);
    await proc.execute({ action: 'write', sessionId: id, data: 'hello\r' });
    await registry.get('run_a', id)?.done;
    const log = await proc.execute({ action: 'log', sessionId: id });
    expect(log.content).toContain('got:hello');
  });
});

describe('process tool: loop guard', () => {
  it('marks watching actions as repeatable so polling is not taken for a stuck loop', () => {
    const tool = createProcessTool({ registry: new ProcessRegistry(), scopeKey: 'guard' });
    expect(tool.repeatable?.({ action: 'poll', sessionId: 's1' })).toBe(true);
    expect(tool.repeatable?.({ action: 'log', sessionId: 's1' })).toBe(true);
    expect(tool.repeatable?.({ action: 'kill', sessionId: 's1' })).toBe(false);
    expect(tool.repeatable?.({ action: 'write', sessionId: 's1', data: 'y' })).toBe(false);
  });
});
