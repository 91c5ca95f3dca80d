import { afterEach, describe, expect, it } from 'vitest';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { createProcessTool } from '../../src/tools/process-tool.js';
import { signalBridgeActive } from '../../src/tools/signal-bridge.js';
import { eventually, liveProcesses, marker, ownWorkdir } from './helpers.js';

const WORKDIR = ownWorkdir();

// A short grace keeps the SIGKILL path quick; the 3 s default is checked in exec-config.test.ts.
let registry: ProcessRegistry;
afterEach(async () => {
  await registry?.shutdown();
});

/**
 * The command's own processes: in the sandbox, bubblewrap's two processes name the marker in their
 * arguments too, and are up before the command inside has run a line.
 */
const commandProcesses = (m: string) => liveProcesses(m).filter((l) => !l.includes('bwrap'));

function setup(opts: ConstructorParameters<typeof ProcessRegistry>[0] = {}) {
  registry = new ProcessRegistry({ killGraceMs: 300, ...opts });
  return {
    exec: createExecTool({ registry, scopeKey: 'run', cwd: WORKDIR }),
    proc: createProcessTool({ registry, scopeKey: 'run' }),
  };
}

describe('no orphans', () => {
  it('kill ends forked grandchildren, including double-forked ones', async () => {
    const { exec, proc } = setup();
    const m = marker();
    const r = await exec.execute({ command: `sleep ${m} & (sleep ${m} &) ; sh -c "sleep ${m}" & sleep ${m}`, background: true });
    expect(await eventually(() => commandProcesses(m).length >= 4)).toBe(true);
    await proc.execute({ action: 'kill', sessionId: r.details?.sessionId as string });
    expect(liveProcesses(m)).toEqual([]);
  });

  it('background jobs a finished command left behind are ended with it', async () => {
    const { exec } = setup();
    const m = marker();
    const r = await exec.execute({ command: `sleep ${m} > /dev/null 2>&1 & echo launched` });
    expect(r.ok).toBe(true);
    expect(r.content).toContain('launched');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('a child holding the pipe open does not hang the session', async () => {
    const { exec } = setup();
    const m = marker();
    const r = await exec.execute({ command: `sleep ${m} & echo out` });
    expect(r.content).toContain('out');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('a group trapping SIGTERM is SIGKILLed after the grace', async () => {
    const { exec, proc } = setup();
    const m = marker();
    const r = await exec.execute({ command: `trap '' TERM; sleep ${m} & sleep ${m}; wait`, background: true });
    expect(await eventually(() => commandProcesses(m).length >= 2)).toBe(true);
    const k = await proc.execute({ action: 'kill', sessionId: r.details?.sessionId as string });
    expect(k.details?.signal).toBe('SIGKILL');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('a timeout ends a SIGTERM-trapping group with grandchildren', async () => {
    const { exec } = setup();
    const m = marker();
    const r = await exec.execute({ command: `trap 'echo ignored' TERM; sh -c "trap '' TERM; sleep ${m}" & while true; do sleep ${m}; done`, timeout: 0.5 });
    expect(r.details?.timedOut).toBe(true);
    expect(liveProcesses(m)).toEqual([]);
  });

  it('an output flood is capped in memory and killed cleanly', async () => {
    const { exec, proc } = setup({ maxOutputChars: 50_000, pendingMaxOutputChars: 5_000 });
    const r = await exec.execute({ command: 'yes flood-line-of-output', yieldMs: 300 });
    expect(r.details?.status).toBe('running');
    const s = registry.get('run', r.details?.sessionId as string);
    expect(await eventually(() => (s?.totalBytes ?? 0) > 1_000_000)).toBe(true);
    expect(s?.fullOutput().length).toBeLessThanOrEqual(50_000);
    expect(s?.truncated).toBe(true);
    const p = await proc.execute({ action: 'poll', sessionId: s!.id });
    expect((p.details?.stdout as string).length).toBeLessThanOrEqual(5_000);
    await proc.execute({ action: 'kill', sessionId: s!.id });
    expect(liveProcesses('yes flood-line-of-output')).toEqual([]);
  });

  it('shutdown ends every live session of every run', async () => {
    const { exec } = setup();
    const exec2 = createExecTool({ registry, scopeKey: 'other', cwd: WORKDIR });
    const m = marker();
    await exec.execute({ command: `sleep ${m}`, background: true });
    await exec2.execute({ command: `trap '' TERM; sleep ${m}`, background: true });
    await exec.execute({ command: `sleep ${m}`, pty: true, background: true });
    expect(await eventually(() => commandProcesses(m).length >= 3)).toBe(true);
    await registry.shutdown();
    expect(liveProcesses(m)).toEqual([]);
    expect(registry.runningCount).toBe(0);
  });

  it('forwards a signal Runtrail receives to live groups and removes its listeners after', async () => {
    const { exec } = setup();
    // Another listener stands for the server: the bridge then forwards only and never re-raises.
    const serverListener = () => {};
    process.on('SIGTERM', serverListener);
    try {
      const before = process.listenerCount('SIGTERM');
      const m = marker();
      const r = await exec.execute({ command: `sleep ${m}`, background: true });
      expect(signalBridgeActive()).toBe(true);
      expect(process.listenerCount('SIGTERM')).toBe(before + 1);
      process.emit('SIGTERM', 'SIGTERM');
      const s = registry.get('run', r.details?.sessionId as string);
      await s?.done;
      expect(s?.signal).toBe('SIGTERM');
      expect(liveProcesses(m)).toEqual([]);
      expect(signalBridgeActive()).toBe(false);
      expect(process.listenerCount('SIGTERM')).toBe(before);
    } finally {
      process.removeListener('SIGTERM', serverListener);
    }
  });
});

describe('ending a session while it is being spawned', () => {
  it('killScope during a (pty) spawn still ends the child and does not hang', async () => {
    registry = new ProcessRegistry({ killGraceMs: 300 });
    const m = marker();
    const starting = registry.start({ scopeKey: 'r', command: `sleep ${m}`, cwd: WORKDIR, env: { PATH: process.env.PATH ?? '/bin' }, pty: true });
    await registry.killScope('r');
    const s = await starting;
    await s.done;
    expect(s.running).toBe(false);
    expect(liveProcesses(m)).toEqual([]);
  });
});
