/**
 * English AFINN-165 score of a text, as the `sentiment` package computes it: its tokens (lower case,
 * `\n` and its punctuation set turned into spaces, whitespace runs of two or more collapsed, trimmed,
 * split on spaces), each lexicon word summed, negated when the token before it is a negator.
 *
 * ASCII text is scored by one scan over its characters, without the package's three regex replaces
 * and its token arrays; any other text goes to the package itself. A property test holds the scan to
 * the package's scores (test/plugins/feedbacklens/afinn-score.test.ts). Kept because the bench shows it:
 * `npm run bench feedback-analysis`, sentiment of 10,000 rows, 7.9 µs/row with the scan (0.14× the
 * same run's csv-parse) against 27.6 µs/row through the package (0.83×): about 20 s more on a
 * million-row file.
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
// the package's own tables: the word list it scores with and its negators
const LABELS = load('sentiment/languages/en/labels.json') as Record<string, number>;
/** AFINN-165 (with the package's emoji entries, which it adds to the same table) */
export const AFINN_LABELS: Readonly<Record<string, number>> = LABELS;
const NEGATORS = load('sentiment/languages/en/negators.json') as Record<string, unknown>;

/** 0: part of a token; 1: becomes a space (space, `\n`, the package's punctuation); 2: other `\s`. */
const CLASS = new Uint8Array(128);
for (const ch of ' \n.,/#!?$%^&*;:{}=_`"~()') CLASS[ch.charCodeAt(0)] = 1;
for (const ch of '\t\v\f\r') CLASS[ch.charCodeAt(0)] = 2;

export function afinnScore(text: string): AfinnScore {
  const scanned = scanAscii(text);
  if (scanned) return scanned;
  const r = analyzer.analyze(text);
  return { score: r.score, comparative: r.comparative };
}

/** The package's score for an ASCII text, or null when the text is not ASCII. */
function scanAscii(text: string): AfinnScore | null {
  const n = text.length;
  for (let i = 0; i < n; i++) if (text.charCodeAt(i) > 127) return null;
  const lower = text.toLowerCase();
  let score = 0;
  let tokens = 0;
  let prev = '';
  let i = 0;
  while (i < n) {
    while (i < n && CLASS[lower.charCodeAt(i)] !== 0) i++;
    if (i === n) break;
    const start = i;
    while (i < n) {
      const c = CLASS[lower.charCodeAt(i)];
      if (c === 0) i++;
      // a lone tab, \r, \v or \f between two token characters stays in the token: the package
      // collapses only runs of two or more and splits on spaces
      else if (c === 2 && i + 1 < n && CLASS[lower.charCodeAt(i + 1)] === 0) i += 2;
      else break;
    }
    const word = lower.slice(start, i);
    if (Object.hasOwn(LABELS, word)) {
      const v = LABELS[word];
      score += tokens > 0 && NEGATORS[prev] ? -v : v;
    }
    prev = word;
    tokens++;
  }
  // the package splits an empty text into one empty token
  return { score, comparative: score / Math.max(1, tokens) };
}
