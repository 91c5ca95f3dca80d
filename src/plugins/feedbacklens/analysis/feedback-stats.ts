/** What an analysis of feedback rows reports: the figures over every row, and its themes. */
import type { Priority, Severity, ThemeSentiment } from './theme-scoring.js';

export interface ThemeSummary {
  theme_id: string;
  title: string;
  key_terms: string[];
  /** stems behind key_terms, for evidence selection */
  key_stems: string[];
  mention_count: number;
  share: number;
  sentiment: ThemeSentiment;
  positive_share: number;
  negative_share: number;
  average_rating: number | null;
  low_rating_share: number | null;
  severity: Severity;
  severity_score: number;
  priority_score: number;
  priority: Priority;
  /** most central rows first, at most 20 */
  feedback_ids: string[];
  /** the rows to quote: central, and for problem themes negative first */
  representative_ids: string[];
}

export interface FeedbackStats {
  analysed_rows: number;
  /** the language most rows are written in (ISO 639-1), and what scored their sentiment */
  language: { code: string; share: number; sentiment_lexicon: string | null };
  rating_scale: { min: number; max: number } | null;
  average_rating: number | null;
  rating_distribution: Record<string, number>;
  channels: Record<string, number>;
  date_range: { from: string; to: string } | null;
  sentiment: { positive: number; neutral: number; negative: number; average_score: number };
  top_terms: Array<{ term: string; rows: number }>;
  themes: ThemeSummary[];
  unclustered_rows: number;
  /** present when the themes were fitted on a sample of the rows (large inputs); counts still cover every row */
  theme_sample?: ThemeSample;
  /** present when the analysis covers a segment the goal named (the rows whose `column` is one of `values`) */
  segment?: { column: string; values: string[]; rows: number; of_rows: number };
}

/** How themes were found on a large input: fitted on a sample, every row placed afterwards. */
export interface ThemeSample {
  /** rows the themes were fitted on */
  rows: number;
  seed: number;
  method: string;
}
