/**
 * How well the feedback analysis generalises: the harness (bench/harness) over 100 seeds per
 * language mix, the pass rate of each score (headline, every topic whole, every theme pure, no
 * theme on filler/greetings/product words, all four), against the goals (headline ≥ 95%, whole
 * ≥ 90%). Then 200,000 rows end to end (`runtrail run feedbacklens`, offline) against a streaming
 * csv-parse of the same file, as a ratio: the time the analysis costs on a large export.
 * `HARNESS_SEEDS=n` changes the seed count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFeedbackCsv } from './feedback-csv-generator.js';
import { LANGUAGE_MIXES } from './harness/feedback-export-generator.js';
import { type ExportScore, passRates, scoreExport } from './harness/harness-scores.js';
import { measureNode } from './peak-rss.js';

const SEEDS = Number(process.env.HARNESS_SEEDS ?? 100);
const pct = (x: number): string => `${(x * 100).toFixed(0)}%`.padStart(5);

export async function run(): Promise<void> {
  harness();
  await endToEnd(200_000);
}

function harness(): void {
  console.log(`harness: ${SEEDS} seeds per language mix (goal: headline ≥ 95%, whole ≥ 90%)`);
  console.log(`${'mix'.padEnd(6)} | headline | whole | pure  | clean | all   | ms/export | most common failure`);
  for (const mix of LANGUAGE_MIXES) {
    const scores: ExportScore[] = [];
    const t = performance.now();
    for (let seed = 1; seed <= SEEDS; seed++) scores.push(scoreExport(seed, mix));
    const ms = (performance.now() - t) / SEEDS;
    const r = passRates(scores);
    const kinds = new Map<string, number>();
    for (const s of scores)
      for (const f of s.failures) {
        const kind = f.includes('headline')
          ? 'wrong headline'
          : f.includes('split')
            ? 'topic split'
            : f.includes('built on')
              ? 'theme on filler/product'
              : 'mixed theme';
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
    const common = [...kinds].sort((a, b) => b[1] - a[1])[0];
    console.log(
      `${mix.padEnd(6)} | ${pct(r.headline).padStart(8)} | ${pct(r.whole)} | ${pct(r.pure)} | ${pct(r.clean)} | ${pct(r.all)} | ${ms.toFixed(0).padStart(9)} | ${common ? `${common[0]} (${common[1]})` : '-'}`,
    );
  }
}

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'src', 'cli', 'main.js');
const BASELINE = join(here, 'csv-stream-baseline.js');

async function endToEnd(rows: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-bench-harness-'));
  try {
    const file = join(dir, 'feedback.csv');
    const bytes = await writeFeedbackCsv(file, rows);
    const base = await measureNode([BASELINE, file]);
    const data = join(dir, 'data');
    const runs = await measureNode([CLI, 'run', 'feedbacklens', '--input', `csv_path=${file}`, '--data-dir', data]);
    if (base.exitCode !== 0 || runs.exitCode !== 0)
      throw new Error(`end to end at ${rows} rows: exit ${base.exitCode}/${runs.exitCode}: ${runs.stderrTail || base.stderrTail}`);
    console.log(
      `\n${rows.toLocaleString('en')} rows (${(bytes / 1e6).toFixed(1)} MB) end to end: run ${(runs.ms / 1000).toFixed(2)} s, csv-parse ${(base.ms / 1000).toFixed(2)} s: ${(runs.ms / base.ms).toFixed(2)}× baseline; peak RSS ${(runs.rss / 1e6).toFixed(0)} MB (limit 4 × file + 150 MB = ${((4 * bytes) / 1e6 + 150).toFixed(0)} MB)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
