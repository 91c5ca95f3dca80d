/**
 * A run whose process died before its last state change reached run_status.json: the status on disk
 * says an earlier state than the one the dead process had reached. The resumed attempt begins in the
 * state its first step implies (here: settling the read-only call that was running), whatever that
 * status says, and completes.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, killHard, MAIN, runEvents, runtrail, type DurableProject } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

const TURNS = [
  { text: 'sending a', toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
  { toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] },
  { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nall sent\n' } }] },
  { text: 'report written' },
];

describe.runIf(existsSync(MAIN))('a run resumed while its status on disk lags the state its process had reached', () => {
  for (const lagging of ['planning', 'created'] as const) {
    it(`status says ${lagging}, the checkpoint's next step is a read-only call: it is run again and the run completes`, async () => {
      p = durableProject(TURNS);
      const first = runtrail(p.dir, ['run', 'worker', '--data-dir', 'data'], children);
      expect(await eventually(() => p!.effects().includes('start lookup:q'), 30_000), first.out()).toBe(true);
      await killHard(first.child);
      const runId = readdirSync(join(p.dir, 'data', 'runs'))[0];
      const statusFile = join(p.dir, 'data', 'runs', runId, 'runtime', 'run_status.json');
      // the dead process was executing the lookup; its last status writes never landed
      writeFileSync(statusFile, JSON.stringify({ ...JSON.parse(readFileSync(statusFile, 'utf8')), status: lagging }));

      p.release();
      const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
      expect(await again.exited, again.out()).toBe(0);
      const status = JSON.parse(readFileSync(statusFile, 'utf8'));
      expect(status.status, again.out()).toBe('completed');
      expect(status.diagnosis).toBeNull();
      expect(p.effects().filter((l) => l === 'start lookup:q')).toHaveLength(2);
      expect(p.effects().filter((l) => l === 'start send:a')).toHaveLength(1);
      const events = runEvents(p.dir, runId);
      expect(checkEventLog(events)).toEqual([]);
      // the resumed attempt's first state change leaves the status it was given for the lookup it runs again
      const resumed = events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
      const firstMove = events.find((e) => e.seq > resumed!.seq && e.stream === 'run' && e.data.type === 'run.state');
      expect(firstMove?.data).toMatchObject({ from: lagging, to: 'tool_executing' });
    }, 120_000);
  }
});
