/**
 * A run killed with SIGKILL while it compacts its context (the summary being written): the
 * compaction is redone from the checkpoint's whole conversation — never half applied — and the run
 * completes with one compaction counted and logged, its finished calls not run again.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

const words = (tag: string) => Array.from({ length: 600 }, (_, i) => `${tag}${i}`).join(' ');

describe.runIf(existsSync(MAIN))('a run killed during compaction', () => {
  it('redoes the compaction from its checkpoint on resume: counted and logged once, no call run twice', async () => {
    p = durableProject(
      [
        { text: words('alpha'), toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
        { text: words('beta'), toolCalls: [{ name: 'send', args: { key: 'b', ms: 0 } }] },
        // the summary of the compaction before this turn takes long enough to be killed in
        { text: words('gamma'), toolCalls: [{ name: 'send', args: { key: 'c', ms: 0 } }], summaryDelayMs: 10_000 },
        { text: words('delta'), toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nsent\n' } }] },
        { text: 'report written' },
      ],
      { agentExtra: 'limits: { context_tokens: 4000 }' },
    );
    const first = runtrail(p.dir, ['run', 'worker', '--data-dir', 'data'], children);
    const runsDir = join(p.dir, 'data', 'runs');
    const eventsFile = () => join(runsDir, readdirSync(runsDir)[0], 'runtime', 'events.jsonl');
    const compacting = () =>
      existsSync(runsDir) &&
      readdirSync(runsDir).length === 1 &&
      existsSync(eventsFile()) &&
      readFileSync(eventsFile(), 'utf8').includes('"stream":"compaction","data":{"phase":"start"');
    expect(await eventually(compacting, 60_000), first.out()).toBe(true);
    await killHard(first.child);
    const runId = readdirSync(runsDir)[0];
    const root = join(runsDir, runId);
    const before = runEvents(p.dir, runId);
    expect(before.filter((e) => e.stream === 'compaction' && e.data.phase === 'end')).toHaveLength(0);
    const sentBefore = p.effects().filter((l) => l.startsWith('done send'));

    const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    const status = JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status, again.out()).toBe('completed');
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    // the cut compaction's start stays in the log; the redone one starts and ends after the resume
    const resumedAt = events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed')!.seq;
    const ends = events.filter((e) => e.stream === 'compaction' && e.data.phase === 'end');
    expect(ends.length).toBeGreaterThan(0);
    expect(ends[0].seq).toBeGreaterThan(resumedAt);
    // every send ran once: those finished before the kill were not run again
    for (const k of ['a', 'b', 'c']) expect(p.effects().filter((l) => l === `start send:${k}`)).toHaveLength(1);
    expect(
      p
        .effects()
        .filter((l) => l.startsWith('done send'))
        .slice(0, sentBefore.length),
    ).toEqual(sentBefore);
    const metrics = JSON.parse(readFileSync(join(root, 'runtime', 'metrics.json'), 'utf8'));
    const logged = readFileSync(join(root, 'runtime', 'compactions.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    // counted and logged once per compaction that took effect, not once more for the one cut short
    expect(metrics.compactions.count).toBe(ends.filter((e) => !(e.data as { failed?: string }).failed).length);
    expect(logged).toHaveLength(metrics.compactions.count);
    expect(existsSync(join(root, 'artifacts', 'report.md'))).toBe(true);
  }, 180_000);
});
