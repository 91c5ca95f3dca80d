/**
 * The offline feedbacklens analysis on 10,000 rows: CSV parsing, AFINN sentiment, term clustering,
 * and the whole analyseFeedback, each as a median of 5 and as a ratio to plain csv-parse (the baseline).
 */
import { parse } from 'csv-parse/sync';
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
  for (const [name, ms] of figures) console.log(`${name.padEnd(30)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / baseline).toFixed(2)}× baseline  ${((ms * 1000) / 10_000).toFixed(1)} µs/row`);
}
