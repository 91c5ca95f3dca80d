/**
 * The offline feedbacklens analysis on 10,000 rows: CSV parsing, AFINN sentiment, term clustering,
 * and the whole analyseFeedback, each as a median of 5 and as a ratio to plain csv-parse (the baseline).
 *
 * Large inputs: `runtrail run feedbacklens` (offline, the CLI as a user runs it,
 * csv_profile child process included) on generated exports of 10,000, 100,000 and 1,000,000 rows,
 * against a streaming csv-parse of the same file, each as its own process: wall time and peak RSS
 * as ratios, time per 1,000 rows (linear in rows?), and whether peak RSS ≤ 4 × the file + 150 MB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { writeFeedbackCsv } from './feedback-csv-generator.js';
import { measureNode, peakRssScope, type Measured } from './peak-rss.js';
import { analyseFeedback } from '../src/plugins/feedbacklens/analysis/analyse-feedback.js';
import { parseFeedbackCsv } from '../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { scoreSentiment } from '../src/plugins/feedbacklens/analysis/sentiment-score.js';
import { clusterThemes } from '../src/plugins/feedbacklens/analysis/theme-clustering.js';

const SUBJECTS = ['export', 'login', 'invoice', 'search', 'dashboard', 'notifications', 'calendar sync', 'mobile app'];
const PROBLEMS = ['fails with a timeout', 'is slow since the update', 'crashes when I open it', 'shows wrong numbers', 'works great, love it'];
const OPENERS = ['Honestly,', 'Since last week', 'FYI', 'Hi team,', ''];

function csv(n: number): string {
  const lines = ['id,text,rating,channel'];
  for (let i = 0; i < n; i++) {
    const s = SUBJECTS[(i * 7) % SUBJECTS.length];
    const p = PROBLEMS[(i * 3 + (i >> 4)) % PROBLEMS.length];
    const text = `${OPENERS[i % OPENERS.length]} the ${s} ${p}${i % 4 === 0 ? ', please fix it, our team depends on it' : ''}.`.trim();
    lines.push(`F${i},"${text}",${p.includes('love') ? 5 : 1 + (i % 3)},${['web', 'ios', 'android'][i % 3]}`);
  }
  return lines.join('\n');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(fn: () => void, reps = 5): number {
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return median(out);
}

export async function run(): Promise<void> {
  await inMemory();
  await largeInputs();
}

async function inMemory(): Promise<void> {
  const text = csv(10_000);
  const parsed = parseFeedbackCsv(text);
  if (!parsed.ok) throw new Error(parsed.error);
  const rows = parsed.value.rows;
  const baseline = time(() => parse(text, { relax_column_count: true }));
  const figures: Array<[string, number]> = [
    ['parseFeedbackCsv', time(() => parseFeedbackCsv(text))],
    ['sentiment (AFINN) all rows', time(() => rows.forEach((r) => scoreSentiment(r.text, null)))],
    ['clusterThemes', time(() => clusterThemes(rows.map((r) => r.text)))],
    ['analyseFeedback (all of it)', time(() => analyseFeedback(rows))],
  ];
  console.log(`10,000 rows; baseline csv-parse: ${baseline.toFixed(1)} ms (median of 5)`);
  for (const [name, ms] of figures)
    console.log(`${name.padEnd(30)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / baseline).toFixed(2)}× baseline  ${((ms * 1000) / 10_000).toFixed(1)} µs/row`);
}

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'src', 'cli', 'main.js');
const BASELINE = join(here, 'csv-stream-baseline.js');
/** rows, and how many times to measure (the 1M row run takes a while: once) */
const SIZES: Array<[number, number]> = [
  [10_000, 3],
  [100_000, 1],
  [1_000_000, 1],
];
const MB = 1e6;

/** The run with the median time of `reps`. */
async function medianOf(reps: number, f: () => Promise<Measured>): Promise<Measured> {
  const all: Measured[] = [];
  for (let i = 0; i < reps; i++) all.push(await f());
  return all.sort((a, b) => a.ms - b.ms)[Math.floor(all.length / 2)];
}

async function largeInputs(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-bench-large-'));
  try {
    console.log(`\nlarge inputs: runtrail run feedbacklens (offline) vs a streaming csv-parse of the same file; peak RSS of the ${peakRssScope()}`);
    console.log(
      `${'rows'.padStart(9)} ${'file MB'.padStart(8)} | ${'parse s'.padStart(8)} ${'MB'.padStart(6)} | ${'run s'.padStart(7)} ${'MB'.padStart(6)} | ${'time ×'.padStart(7)} ${'RSS ×'.padStart(6)} | ${'ms/1k rows'.padStart(10)} | RSS ≤ 4×file+150 MB`,
    );
    for (const [rows, reps] of SIZES) {
      const file = join(dir, `feedback-${rows}.csv`);
      const bytes = await writeFeedbackCsv(file, rows);
      const base = await medianOf(reps, () => measureNode([BASELINE, file]));
      const runs = await medianOf(reps, () => {
        const data = join(dir, `data-${rows}`);
        return measureNode([CLI, 'run', 'feedbacklens', '--input', `csv_path=${file}`, '--data-dir', data]).finally(() =>
          rmSync(data, { recursive: true, force: true }),
        );
      });
      if (base.exitCode !== 0 || runs.exitCode !== 0)
        throw new Error(`large-input bench at ${rows} rows: exit ${base.exitCode}/${runs.exitCode}: ${runs.stderrTail || base.stderrTail}`);
      const limit = 4 * bytes + 150 * MB;
      const perK = runs.ms / (rows / 1000);
      console.log(
        `${rows.toLocaleString('en').padStart(9)} ${(bytes / MB).toFixed(1).padStart(8)} | ${(base.ms / 1000).toFixed(2).padStart(8)} ${(base.rss / MB).toFixed(0).padStart(6)} | ${(runs.ms / 1000).toFixed(2).padStart(7)} ${(runs.rss / MB).toFixed(0).padStart(6)} | ${(runs.ms / base.ms).toFixed(1).padStart(6)}× ${(runs.rss / base.rss).toFixed(1).padStart(5)}× | ${perK.toFixed(1).padStart(10)} | ${runs.rss <= limit ? 'yes' : 'NO'} (${(runs.rss / MB).toFixed(0)} ≤ ${(limit / MB).toFixed(0)})`,
      );
      rmSync(file, { force: true });
    }
    console.log(
      `  (${SIZES.map(([r, n]) => `${r.toLocaleString('en')}: ${n === 1 ? 'measured once' : `median of ${n}`}`).join(', ')}; ms/1k rows flat = linear in rows; the 10,000-row row includes the CLI's start-up)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
