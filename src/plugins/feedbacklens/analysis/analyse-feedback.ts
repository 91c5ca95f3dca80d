/**
 * The whole analysis over normalised rows: sentiment per row, themes by clustering, severity from
 * negative sentiment and low ratings, priority from frequency × severity. Pure and deterministic.
 * This is the in-memory entry point (the library API); the plugin streams rows from disk through
 * the same FeedbackAnalyser, in passes.
 */
import { detectCorpusLanguage, type CorpusLanguage } from '../../shared/text-language.js';
import { FeedbackAnalyser } from './feedback-analyser.js';
import type { FeedbackRow } from './feedback-row.js';
import { FeedbackTally } from './feedback-tally.js';
import type { FeedbackStats } from './feedback-stats.js';

export { priorityOf, severityOf, themeTitle, type Priority, type Severity, type ThemeSentiment } from './theme-scoring.js';

export type { FeedbackStats, ThemeSample, ThemeSummary } from './feedback-stats.js';

/** Every row is analysed; themes are fitted on all of them (no sample, whatever the count). */
export function analyseFeedback(rows: FeedbackRow[], opts: { productName?: string; language?: CorpusLanguage } = {}): FeedbackStats {
  return analyseFeedbackRows(rows, opts).stats;
}

/** The analysis, and which theme each row went to (an index into `stats.themes`, -1: none). */
export function analyseFeedbackRows(
  rows: FeedbackRow[],
  opts: { productName?: string; language?: CorpusLanguage } = {},
): { stats: FeedbackStats; themeOfRow: Int32Array } {
  const language = opts.language ?? detectCorpusLanguage(rows.map((r) => r.text));
  const tally = new FeedbackTally();
  for (const r of rows) tally.add(r);
  const analyser = new FeedbackAnalyser(tally, { language, productName: opts.productName, fitRows: Number.POSITIVE_INFINITY });
  rows.forEach((r, i) => analyser.fitRow(i, r.text));
  analyser.fit();
  return { stats: analyser.finish((i) => rows[i].feedback_id), themeOfRow: analyser.themeOfRows() };
}
