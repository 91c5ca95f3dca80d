import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { createProcessTool } from '../../src/tools/process-tool.js';
import { liveProcesses, marker, recordingReporter, type ReporterCall } from './helpers.js';

let root: string;
let registry: ProcessRegistry;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'rt-exec-'));
  mkdirSync(join(root, 'sub'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  await registry?.shutdown();
});

function tools(opts: Partial<Parameters<typeof createExecTool>[0]> = {}) {
  registry = new ProcessRegistry();
  const exec = createExecTool({ registry, scopeKey: 'run_a', cwd: root, ...opts });
  const proc = createProcessTool({ registry, scopeKey: 'run_a' });
  return { exec, proc };
}

describe('exec in the foreground', () => {
  it('returns the output and exit code 0 as ok', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'echo hello; echo oops >&2' });
    expect(r.ok).toBe(true);
    expect(r.content).toContain('hello');
    expect(r.content).toContain('oops');
    expect(r.details).toMatchObject({ status: 'completed', exitCode: 0, signal: null, timedOut: false, truncated: false });
    expect(r.content).toMatch(/\n\nProcess exited with code 0 after \d+\.\d s\.$/);
    expect(typeof r.details?.pid).toBe('number');
  });

  it('fails with a Diagnosis on a non-zero exit', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'echo bad; exit 3' });
    expect(r.ok).toBe(false);
    expect(r.details).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(r.diagnosis).toMatchObject({ code: 'exec_exit_nonzero', severity: 'error' });
    expect(r.content).toContain('exited with code 3');
  });

  it('runs in workdir, relative to the run cwd', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'pwd', workdir: 'sub' });
    expect(r.content.split('\n')[0]).toMatch(/\/sub$/);
  });

  it('keeps server secrets out of the child, but passes the env given', async () => {
    process.env.RUNTRAIL_TEST_SECRET_TOKEN = 'sk-should-not-leak';
    try {
      const { exec } = tools({ env: { FROM_TOOL: 'a' } });
      const r = await exec.execute({ command: 'env', env: { FROM_CALL: 'b' } });
      expect(r.content).not.toContain('sk-should-not-leak');
      expect(r.content).toContain('FROM_TOOL=a');
      expect(r.content).toContain('FROM_CALL=b');
      expect(r.content).toMatch(/^PATH=/m);
    } finally {
      delete process.env.RUNTRAIL_TEST_SECRET_TOKEN;
    }
  });

  it("a timeout of days (beyond a timer's range) does not kill the command at once", async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'sleep 0.3; echo survived', timeout: 30 * 86_400 });
    expect(r.ok).toBe(true);
    expect(r.content).toContain('survived');
    expect(r.details).toMatchObject({ status: 'completed', timedOut: false });
  });

  it('kills the group on timeout and says so', async () => {
    const { exec } = tools();
    const m = marker();
    const r = await exec.execute({ command: `sleep ${m}`, timeout: 0.3 });
    expect(r.ok).toBe(false);
    expect(r.details).toMatchObject({ status: 'failed', timedOut: true });
    expect(r.diagnosis?.code).toBe('exec_timeout');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('cancels with the abort signal and leaves nothing behind', async () => {
    const { exec } = tools();
    const m = marker();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await exec.execute({ command: `sleep ${m}` }, { signal: ac.signal });
    expect(r.ok).toBe(false);
    expect(r.diagnosis?.code).toBe('exec_cancelled');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('caps output keeping the tail and flags the cut', async () => {
    registry = new ProcessRegistry({ maxOutputChars: 1000 });
    const exec = createExecTool({ registry, scopeKey: 's', cwd: root });
    const r = await exec.execute({ command: 'seq 1 20000' });
    expect(r.ok).toBe(true);
    expect(r.details?.truncated).toBe(true);
    expect(r.content).toContain('20000');
    expect(r.content).not.toMatch(/^1\n2\n/);
    expect(r.content).toMatch(/earlier bytes of output were cut/);
    expect(r.content.length).toBeLessThan(1200);
  });

  it('uses a pty when asked', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'test -t 1 && echo is-a-tty', pty: true });
    // Either a real tty or an announced fallback to pipes: never a silent difference.
    if (r.details?.pty) expect(r.content).toContain('is-a-tty');
    else expect(r.content).toMatch(/pty unavailable/);
  });

  it('reports started, running with byte counts, then completed', async () => {
    const { exec } = tools();
    const calls: ReporterCall[] = [];
    const reporter = recordingReporter(calls);
    const r = await exec.execute({ command: 'for i in 1 2 3 4; do echo tick$i; sleep 0.15; done' }, { reporter });
    expect(r.ok).toBe(true);
    const child = calls.find((c) => c.method === 'child');
    expect(child?.arg).toMatchObject({ targetType: 'tool', source: 'tool' });
    const mine = calls.filter((c) => c.op !== 'op_root').map((c) => c.method);
    expect(mine[0]).toBe('start');
    expect(mine).toContain('progress');
    expect(mine[mine.length - 1]).toBe('complete');
    const progress = calls.find((c) => c.method === 'progress')?.arg as { current: number; payload: { stdoutBytes: number } };
    expect(progress.current).toBeGreaterThan(0);
    expect(progress.payload.stdoutBytes).toBeGreaterThan(0);
  });

  it('reports failed on a non-zero exit and cancelled on kill', async () => {
    const { exec, proc } = tools();
    const calls: ReporterCall[] = [];
    await exec.execute({ command: 'exit 2' }, { reporter: recordingReporter(calls) });
    expect(calls.filter((c) => c.op !== 'op_root').at(-1)?.method).toBe('fail');
    const calls2: ReporterCall[] = [];
    const r = await exec.execute({ command: `sleep ${marker()}`, background: true }, { reporter: recordingReporter(calls2) });
    await proc.execute({ action: 'kill', sessionId: r.details?.sessionId as string });
    expect(calls2.filter((c) => c.op !== 'op_root').at(-1)?.method).toBe('cancel');
  });

  it('without the process tool, runs to the end and ignores yieldMs/background', async () => {
    const { exec } = tools({ processToolEnabled: false });
    const r = await exec.execute({ command: 'sleep 0.2; echo finished', yieldMs: 10, background: true });
    expect(r.details?.status).toBe('completed');
    expect(r.content).toContain('finished');
  });
});

describe('exec backgrounding', () => {
  it('returns running with a sessionId after yieldMs and keeps going', async () => {
    const { exec, proc } = tools();
    // the yield leaves room for the sandbox to start under load (tens of ms) before `early` is due
    const r = await exec.execute({ command: 'echo early; sleep 1; echo late', yieldMs: 400 });
    expect(r.ok).toBe(true);
    expect(r.details).toMatchObject({ status: 'running' });
    expect(r.details?.sessionId).toMatch(/^exec_/);
    expect(r.details?.tail).toContain('early');
    const p = await proc.execute({ action: 'poll', sessionId: r.details?.sessionId as string, waitMs: 5000 });
    expect(p.content).toContain('early');
    let seen = p.content;
    for (let i = 0; i < 10 && !/exited with code/.test(seen); i++) {
      seen += (await proc.execute({ action: 'poll', sessionId: r.details?.sessionId as string, waitMs: 5000 })).content;
    }
    expect(seen).toContain('late');
    expect(seen).toMatch(/Process exited with code 0 after \d+\.\d s\./);
  });

  it('background: true returns at once', async () => {
    const { exec, proc } = tools();
    const r = await exec.execute({ command: `sleep ${marker()}`, background: true });
    expect(r.details?.status).toBe('running');
    const l = await proc.execute({ action: 'list' });
    expect(l.content).toContain(r.details?.sessionId as string);
    expect(l.content).toContain('sleep');
  });

  it('queues an exit notice for the next turn, once', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'echo result-line; exit 4', background: true });
    const id = r.details?.sessionId as string;
    await registry.get('run_a', id)?.done;
    const notices = registry.drainNotices('run_a');
    expect(notices).toEqual([`Exec completed (${id}, code 4) :: result-line`]);
    expect(registry.drainNotices('run_a')).toEqual([]);
    expect(registry.drainNotices('run_b')).toEqual([]);
  });

  it('skips the notice for an empty success unless asked', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'true', background: true });
    await registry.get('run_a', r.details?.sessionId as string)?.done;
    expect(registry.drainNotices('run_a')).toEqual([]);
    const exec2 = createExecTool({ registry, scopeKey: 'run_a', cwd: root, notifyOnExitEmptySuccess: true });
    const r2 = await exec2.execute({ command: 'true', background: true });
    await registry.get('run_a', r2.details?.sessionId as string)?.done;
    expect(registry.drainNotices('run_a')).toEqual([`Exec completed (${r2.details?.sessionId}, code 0)`]);
  });

  it('skips the notice when the model already polled the exit', async () => {
    const { exec, proc } = tools();
    const r = await exec.execute({ command: 'echo x', background: true });
    const id = r.details?.sessionId as string;
    await registry.get('run_a', id)?.done;
    await proc.execute({ action: 'poll', sessionId: id });
    expect(registry.drainNotices('run_a')).toEqual([]);
  });
});

describe('exec bad input', () => {
  it('refuses an empty command', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: '   ' });
    expect(r.ok).toBe(false);
    expect(r.diagnosis?.code).toBe('exec_bad_input');
    expect(r.content).toMatch(/command is empty/);
  });

  it('refuses a huge command', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: `echo ${'x'.repeat(200_000)}` });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/limit is 65536/);
  });

  it('refuses a workdir outside the roots, including via ..', async () => {
    const { exec } = tools();
    for (const workdir of ['/etc', '../..', 'sub/../../']) {
      const r = await exec.execute({ command: 'pwd', workdir });
      expect(r.ok, workdir).toBe(false);
      expect(r.content).toMatch(/outside the allowed roots/);
    }
  });

  it('refuses a missing workdir', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'pwd', workdir: 'nope' });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/does not exist/);
  });

  it('refuses elevated unless the server allows it', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 'pwd', elevated: true });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/elevated mode is off on this server/);
    const { exec: ex2 } = tools({ allowElevated: true });
    const r2 = await ex2.execute({ command: 'pwd', elevated: true, workdir: '/' });
    expect(r2.ok).toBe(true);
    expect(r2.content.split('\n')[0]).toBe('/');
  });

  it('refuses arguments of the wrong type and bad env names', async () => {
    const { exec } = tools();
    const r = await exec.execute({ command: 42 } as unknown as { command: string });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/command/);
    const r2 = await exec.execute({ command: 'true', env: { 'A=B': 'x' } });
    expect(r2.ok).toBe(false);
    expect(r2.content).toMatch(/not a valid variable name/);
  });
});

describe('exec with the real operation reporter', () => {
  it('emits one started, running updates with bytes, and one terminal event for the session', async () => {
    const { createOperationReporter } = await import('../../src/events/operation-reporter.js');
    const events: Array<{ operationId: string; parentOperationId?: string; status: string; targetType: string; current?: number }> = [];
    const root = createOperationReporter({ targetType: 'tool', source: 'tool', sink: (e) => events.push(e) });
    const { exec } = tools();
    await exec.execute({ command: 'for i in 1 2 3; do echo line$i; sleep 0.3; done' }, { reporter: root });
    const mine = events.filter((e) => e.parentOperationId === root.operationId);
    expect(mine.map((e) => e.status).filter((s) => s !== 'running')).toEqual(['started', 'completed']);
    expect(mine.some((e) => e.status === 'running' && (e.current ?? 0) > 0)).toBe(true);
    expect(mine.every((e) => e.targetType === 'tool')).toBe(true);
  });
});

describe('executor deadline', () => {
  it('keeps its own deadline within what a timer can hold, however long RUNTRAIL_EXEC_TIMEOUT_SEC is', () => {
    registry = new ProcessRegistry({ env: { RUNTRAIL_EXEC_TIMEOUT_SEC: String(60 * 86_400) } });
    const exec = createExecTool({ registry, scopeKey: 'run_a', cwd: root, processToolEnabled: false });
    expect(exec.timeoutMs).toBeGreaterThan(1_800_000);
    expect(exec.timeoutMs).toBeLessThanOrEqual(2_147_483_647);
  });

  it('outlasts the longest yield, or the command timeout without the process tool', () => {
    expect(tools().exec.timeoutMs).toBeGreaterThan(120_000);
    expect(tools({ processToolEnabled: false }).exec.timeoutMs).toBeGreaterThan(1_800_000);
  });
});

describe('exit lines read back', () => {
  it('parseExitLine reads what exec and poll print', async () => {
    const { parseExitLine, parseRunningSession } = await import('../../src/tools/exec-results.js');
    const { exec } = tools();
    const ok = await exec.execute({ command: 'echo hi' });
    expect(parseExitLine(ok.content)).toMatchObject({ exitCode: 0, signal: null, timedOut: false });
    expect(parseExitLine(ok.content)?.durationS).toBeGreaterThanOrEqual(0);
    const bad = await exec.execute({ command: 'exit 7' });
    expect(parseExitLine(bad.content)?.exitCode).toBe(7);
    const to = await exec.execute({ command: `sleep ${marker()}`, timeout: 0.2 });
    expect(parseExitLine(to.content)).toMatchObject({ exitCode: null, timedOut: true, signal: 'SIGTERM' });
    const bg = await exec.execute({ command: `sleep ${marker()}`, background: true });
    expect(parseExitLine(bg.content)).toBeNull();
    expect(parseRunningSession(bg.content)).toBe(bg.details?.sessionId);
  });
});
