/** Row sentiment from the AFINN-165 lexicon (`sentiment` package), blended with a rating when there is one. */
import { createRequire } from 'node:module';
import Sentiment from 'sentiment';

export type SentimentLabel = 'positive' | 'neutral' | 'negative';

export interface RowSentiment {
  /** AFINN sum over the text */
  score: number;
  /** score per token */
  comparative: number;
  /** blended signal in [-1, 1] */
  signal: number;
  label: SentimentLabel;
}

const analyzer = new Sentiment();
// the same AFINN-165 word list the analyzer scores with
const AFINN = createRequire(import.meta.url)('sentiment/languages/en/labels.json') as Record<string, number>;

/** Praise words ("love", "great", "easy") say how people feel, not what about: not theme names. */
export function isPraiseWord(word: string): boolean {
  const v = AFINN[word.toLowerCase()];
  return typeof v === 'number' && v > 0;
}

/** `ratingNorm` is the rating mapped to [0, 1], or null when the row has none. */
export function scoreSentiment(text: string, ratingNorm: number | null): RowSentiment {
  const r = analyzer.analyze(text);
  const lexical = Math.max(-1, Math.min(1, r.comparative * 4));
  const signal = ratingNorm === null ? lexical : 0.5 * lexical + 0.5 * (ratingNorm * 2 - 1);
  const threshold = ratingNorm === null ? 0.02 : 0.15;
  const label: SentimentLabel = signal > threshold ? 'positive' : signal < -threshold ? 'negative' : 'neutral';
  return { score: r.score, comparative: r.comparative, signal, label };
}

/** Detect the rating scale from the values seen: 1–5, 0–10 (NPS), or 0–100. */
export function ratingScale(ratings: Array<number | null>): { min: number; max: number } | null {
  let max = Number.NEGATIVE_INFINITY;
  let any = false;
  for (const r of ratings) {
    if (r === null) continue;
    any = true;
    if (r > max) max = r;
  }
  if (!any) return null;
  if (max <= 5) return { min: 1, max: 5 };
  if (max <= 10) return { min: 0, max: 10 };
  return { min: 0, max: Math.max(100, max) };
}

export function normaliseRating(r: number | null, scale: { min: number; max: number } | null): number | null {
  if (r === null || scale === null) return null;
  return Math.max(0, Math.min(1, (r - scale.min) / (scale.max - scale.min)));
}
