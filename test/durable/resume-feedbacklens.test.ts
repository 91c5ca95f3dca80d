/** The offline feedbacklens run, killed with SIGKILL mid-way, resumes and completes with valid artifacts. */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFeedbackCsv } from '../../bench/feedback-csv-generator.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, killHard, MAIN, runEvents, runtrail } from './durable-fixture.js';

const children: ChildProcess[] = [];
let dir = '';
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(existsSync(MAIN))('the offline feedbacklens run killed mid-way', () => {
  it('resumes from its checkpoint and completes, its artifacts valid, no step done twice that was finished', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-durable-fl-'));
    // an export large enough (50,000 rows, a few seconds offline) that the kill falls mid-way
    const input = join(dir, 'feedback.csv');
    await writeFeedbackCsv(input, 50_000);
    const first = runtrail(dir, ['run', 'feedbacklens', '--input', `csv_path=${input}`, '--data-dir', 'data', '--json'], children);
    const runsDir = join(dir, 'data', 'runs');
    const eventsOf = () => {
      const id = existsSync(runsDir) ? readdirSync(runsDir)[0] : undefined;
      return id && existsSync(join(runsDir, id, 'runtime', 'events.jsonl')) ? readFileSync(join(runsDir, id, 'runtime', 'events.jsonl'), 'utf8') : '';
    };
    // mid-way: the statistics are in, the evidence is being gathered
    expect(await eventually(() => /"phase":"result","name":"feedback_stats"/.test(eventsOf()), 90_000), first.out()).toBe(true);
    await killHard(first.child);
    const runId = readdirSync(runsDir)[0];
    const before = runEvents(dir, runId);
    expect(before.some((e) => e.stream === 'run' && e.data.type === 'run.completed')).toBe(false);

    const again = runtrail(dir, ['resume', runId, '--data-dir', 'data'], children);
    await again.exited;
    const status = JSON.parse(readFileSync(join(runsDir, runId, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status, again.out()).toBe('completed');
    const events = runEvents(dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    expect(events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed')).toHaveLength(1);
    // feedback_stats had finished before the kill: it ran once
    const starts = events.filter((e) => e.stream === 'tool' && e.data.phase === 'start' && e.data.name === 'feedback_stats');
    expect(starts).toHaveLength(1);
    // the artifacts passed the stop validation (the run completed) and are listed in the manifest
    const manifest = JSON.parse(readFileSync(join(runsDir, runId, 'manifest.json'), 'utf8'));
    expect(manifest.status).toBe('completed');
    expect(manifest.documents.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining([expect.stringContaining('insight_report.md')]));
  }, 180_000);
});
