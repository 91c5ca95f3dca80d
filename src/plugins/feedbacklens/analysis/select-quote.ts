/** Evidence quotes: always a verbatim slice of the row's text, so the stop check can verify it. */
import { contentTokens } from '../../shared/tokenize.js';

export const MAX_QUOTE_CHARS = 280;
/** Rows up to this long are quoted whole: the full voice reads better than a fragment. */
export const WHOLE_ROW_CHARS = 220;

/** Sentences as [start, end) offsets into `text`, trimmed. */
export function sentenceSpans(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(/[^.!?。！？\n]+(?:[.!?。！？]+|$)/gm)) {
    const raw = m[0];
    const lead = raw.length - raw.trimStart().length;
    const body = raw.trim();
    if (body.length > 0) out.push([(m.index ?? 0) + lead, (m.index ?? 0) + lead + body.length]);
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

/** Short rows are quoted whole; longer ones by the sentence carrying most of `stems`, widened to the next sentence when very short. */
export function selectQuote(text: string, stems: string[] = [], lang = 'en'): string {
  const trimmed = text.trim();
  if (trimmed.length <= WHOLE_ROW_CHARS) return trimmed;
  const want = new Set(stems.flatMap((s) => s.split(' ')));
  const spans = sentenceSpans(trimmed);
  let best = -1;
  let bestScore = -1;
  spans.forEach(([a, b], k) => {
    let hits = 0;
    for (const t of contentTokens(trimmed.slice(a, b), lang)) if (want.has(t.stem)) hits++;
    const score = hits * 1000 + Math.min(b - a, 200);
    if (score > bestScore) [best, bestScore] = [k, score];
  });
  if (best < 0) return clip(trimmed, MAX_QUOTE_CHARS);
  let [a, b] = spans[best];
  if (b - a < 40 && best + 1 < spans.length) b = spans[best + 1][1];
  return clip(trimmed.slice(a, b), MAX_QUOTE_CHARS);
}

/** The verbatim rule the validators apply: whitespace runs count as one space, everything else exact. */
export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

export function isVerbatimQuote(quote: string, text: string): boolean {
  const q = collapseWhitespace(quote);
  return q.length > 0 && collapseWhitespace(text).includes(q);
}
