import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessLedger, endLeftoverProcesses, processStartTime } from '../../src/tools/process-ledger.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { eventually, liveProcesses, marker } from './helpers.js';

let dir = '';
const strays: number[] = [];
afterEach(() => {
  for (const pgid of strays.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A detached `sh -c "sleep M & sleep M"` as a killed Runtrail leaves it: a group of three. */
function strayGroup(m: string) {
  const c = spawn('/bin/sh', ['-c', `sleep ${m} & sleep ${m}; wait`], { detached: true, stdio: 'ignore' });
  c.unref();
  strays.push(c.pid!);
  return c.pid!;
}

describe('ProcessLedger', () => {
  it('keeps one entry per live session, with the start time, and removes the file when the last ends', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-'));
    const file = join(dir, 'processes.json');
    const registry = new ProcessRegistry({ killGraceMs: 300 });
    registry.trackScope('run', file);
    const m = marker();
    const s = await registry.start({ scopeKey: 'run', command: `sleep ${m}`, cwd: dir, env: { PATH: process.env.PATH ?? '/bin' } });
    const entries = (JSON.parse(readFileSync(file, 'utf8')) as { processes: Array<{ pid: number; pgid: number; start_time: number; command: string }> })
      .processes;
    expect(entries).toEqual([expect.objectContaining({ pid: s.pid, pgid: s.pid, command: `sleep ${m}`, start_time: processStartTime(s.pid!) })]);
    await s.end('kill');
    expect(existsSync(file)).toBe(false);
    await registry.shutdown();
  });

  it('keeps the entries already in the file (a resumed run) when it records a new session', () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-'));
    const file = join(dir, 'processes.json');
    const earlier = { session_id: 'old', pid: 4242, pgid: 4242, start_time: 1, command: 'sleep 1', started_at: '2026-12-01T00:00:00.000Z' };
    const ledger = new ProcessLedger(file);
    // written after the ledger was made and before its first change: the file is read at that change
    writeFileSync(file, JSON.stringify({ processes: [earlier] }));
    ledger.add({ session_id: 'new', pid: process.pid, pgid: process.pid, command: 'node' });
    const entries = (JSON.parse(readFileSync(file, 'utf8')) as { processes: Array<{ session_id: string }> }).processes;
    expect(entries.map((e) => e.session_id)).toEqual(['old', 'new']);
    ledger.remove('new');
    expect((JSON.parse(readFileSync(file, 'utf8')) as { processes: unknown[] }).processes).toEqual([earlier]);
  });
});

describe('endLeftoverProcesses', () => {
  it('ends every process of a recorded group and says how many', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-'));
    const file = join(dir, 'processes.json');
    const m = marker();
    const pgid = strayGroup(m);
    expect(await eventually(() => liveProcesses(m).length === 3)).toBe(true);
    new ProcessLedger(file).add({ session_id: 'exec_1', pid: pgid, pgid, command: `sleep ${m}` });
    const r = await endLeftoverProcesses(file, 300);
    expect(r.ended).toBe(3);
    expect(liveProcesses(m)).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it('never kills a process whose pid was given to another one (start time differs)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-'));
    const file = join(dir, 'processes.json');
    const m = marker();
    const pgid = strayGroup(m);
    expect(await eventually(() => liveProcesses(m).length === 3)).toBe(true);
    const real = processStartTime(pgid)!;
    writeFileSync(file, JSON.stringify({ processes: [{ session_id: 'exec_1', pid: pgid, pgid, start_time: real - 1, command: 'old', started_at: '' }] }));
    const r = await endLeftoverProcesses(file, 300);
    expect(r.ended).toBe(0);
    expect(liveProcesses(m)).toHaveLength(3);
  });

  it('a missing or unreadable ledger ends nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-'));
    expect(await endLeftoverProcesses(join(dir, 'none.json'))).toEqual({ ended: 0, commands: [], sessions: [] });
    writeFileSync(join(dir, 'bad.json'), '{not json');
    expect((await endLeftoverProcesses(join(dir, 'bad.json'))).ended).toBe(0);
  });
});
