/**
 * English AFINN-165 score of a text, by the `sentiment` package: each lexicon word of its tokens
 * summed, negated when the token before it is a negator; and the package's word list, which the
 * other languages' scoring falls back to.
 */
import { createRequire } from 'node:module';
import Sentiment from 'sentiment';

export interface AfinnScore {
  /** lexicon sum over the text (AFINN units) */
  score: number;
  /** score per token */
  comparative: number;
}

const analyzer = new Sentiment();
const load = createRequire(import.meta.url);
// the package's own word list
const LABELS = load('sentiment/languages/en/labels.json') as Record<string, number>;
/** AFINN-165 (with the package's emoji entries, which it adds to the same table) */
export const AFINN_LABELS: Readonly<Record<string, number>> = LABELS;

export function afinnScore(text: string): AfinnScore {
  const r = analyzer.analyze(text);
  return { score: r.score, comparative: r.comparative };
}
