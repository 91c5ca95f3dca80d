/** Evidence quotes: always a verbatim slice of the row's text, so the stop check can verify it. */
import { contentTokens } from './tokenize.js';

export const MAX_QUOTE_CHARS = 280;

/** Sentences with their exact slices of `text`. */
export function sentenceSlices(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[^.!?\n]+(?:[.!?]+|$)/gm)) {
    const s = m[0].trim();
    if (s.length > 0) out.push(s);
  }
  return out;
}

/** Cut at a word boundary; the result is still a substring of the input. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return (space > max / 2 ? cut.slice(0, space) : cut).trim();
}

/** The sentence that carries the most of `stems` (ties: the longer one), clipped to MAX_QUOTE_CHARS. */
export function selectQuote(text: string, stems: string[] = []): string {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_QUOTE_CHARS && stems.length === 0) return trimmed;
  const want = new Set(stems.flatMap((s) => s.split(' ')));
  let best = '';
  let bestScore = -1;
  for (const s of sentenceSlices(trimmed)) {
    let hits = 0;
    for (const t of contentTokens(s)) if (want.has(t.stem)) hits++;
    const score = hits * 1000 + Math.min(s.length, 200);
    if (score > bestScore) [best, bestScore] = [s, score];
  }
  if (best === '') best = trimmed;
  // A short text is quoted whole when the best sentence is only a fragment of it.
  if (trimmed.length <= MAX_QUOTE_CHARS && best.length < 20) return trimmed;
  return clip(best, MAX_QUOTE_CHARS);
}

/** The verbatim rule the validators apply: whitespace runs count as one space, everything else exact. */
export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

export function isVerbatimQuote(quote: string, text: string): boolean {
  const q = collapseWhitespace(quote);
  return q.length > 0 && collapseWhitespace(text).includes(q);
}
