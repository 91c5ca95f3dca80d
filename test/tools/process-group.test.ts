import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { terminateTree } from '../../src/tools/process-group.js';
import { liveProcesses, marker } from './helpers.js';

describe('terminateTree', () => {
  it('ends a leader that does not lead its group yet (a kill between spawn and setsid)', async () => {
    // Not detached: the child stays in our group, so no group with its pid exists — exactly the state
    // of a freshly spawned (pty) child before it calls setsid(). A group-only kill misses it.
    const m = marker();
    const child = spawn('sleep', [m], { stdio: 'ignore' });
    let exited = false;
    child.once('exit', () => (exited = true));
    const how = await terminateTree({ pgid: child.pid!, leaderRunning: () => !exited }, 300);
    expect(how).toBe('term');
    expect(exited).toBe(true);
    expect(liveProcesses(m)).toEqual([]);
  });

  it('says gone when neither the leader nor its group is left', async () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    await new Promise((r) => child.once('exit', r));
    expect(await terminateTree({ pgid: child.pid!, leaderRunning: () => false }, 300)).toBe('gone');
  });
});
