/**
 * Row sentiment: English by the AFINN-165 lexicon (`sentiment` package); other languages by their
 * packaged lexicon (sentiment-lexicons.ts) with negation; blended with a rating when there is one.
 * A language without a lexicon gets its sentiment from ratings alone.
 */
import { AFINN_LABELS, afinnScore } from './afinn-score.js';
import { lexiconFor, type Lexicon } from './sentiment-lexicons.js';

export type SentimentLabel = 'positive' | 'neutral' | 'negative';

export interface RowSentiment {
  /** lexicon sum over the text (AFINN units) */
  score: number;
  /** score per token */
  comparative: number;
  /** blended signal in [-1, 1] */
  signal: number;
  label: SentimentLabel;
}

/** Praise words ("love", "great", "easy", "喜欢") say how people feel, not what about: not theme names. */
export function isPraiseWord(word: string, lang = 'en'): boolean {
  const w = word.toLowerCase();
  const v = AFINN_LABELS[w];
  if (typeof v === 'number' && v > 0) return true;
  if (lang === 'en') return false;
  const lex = lexiconFor(lang);
  return (lex?.valueOf(w) ?? 0) > 0;
}

/** Words per negator scope: "no es muy buena" still negates "buena"; a clause boundary ends it. */
const NEG_WORDS = 3;
/** Characters per negator scope in scripts without spaces (不太满意, 正確ではありません). */
const NEG_CHARS = 5;
/**
 * A negator that negates no lexicon word ("no funciona", "不能同步", "同期できない") still reports
 * something not working, in feedback: it counts as a mild negative word.
 */
const DANGLING_NEGATION = -1;

interface Item {
  kind: 'hit' | 'neg';
  value: number;
  /** start and end, in words (words mode) or characters (substring mode) */
  start: number;
  end: number;
  clause: number;
}

const CLAUSE_RE = /[,.;:!?，。、；：！？…\n]|\s(?:but|pero|mais|aber|mas)\s|但是|可是|不过|けど|しかし/u;
const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

const wordSegmenters = new Map<string, Intl.Segmenter>();

/** Character offsets where ICU's word segmentation puts a boundary. */
function wordBoundaries(chars: string[], lang: string): Set<number> {
  let seg = wordSegmenters.get(lang);
  if (!seg) wordSegmenters.set(lang, (seg = new Intl.Segmenter(lang, { granularity: 'word' })));
  const out = new Set<number>([0]);
  let at = 0;
  for (const s of seg.segment(chars.join(''))) {
    at += [...s.segment].length;
    out.add(at);
  }
  return out;
}

function itemsOf(text: string, lex: Lexicon): { items: Item[]; tokens: number } {
  const src = text.toLowerCase().normalize('NFKC');
  const items: Item[] = [];
  if (lex.match === 'words') {
    let clause = 0;
    let i = 0;
    let last = 0;
    for (const m of src.matchAll(WORD_RE)) {
      const at = m.index ?? 0;
      if (CLAUSE_RE.test(src.slice(last, at))) clause++;
      last = at + m[0].length;
      // "n'est" → "n" is the French negator
      const w = m[0].includes("'") || m[0].includes('’') ? m[0].split(/['’]/)[0] : m[0];
      if (lex.negators.has(w)) items.push({ kind: 'neg', value: 0, start: i, end: i + 1, clause });
      else {
        const v = lex.valueOf(m[0]);
        if (v !== undefined && v !== 0) items.push({ kind: 'hit', value: v, start: i, end: i + 1, clause });
      }
      i++;
    }
    return { items, tokens: i };
  }
  // substring mode: longest negator or lexicon entry at each position, left to right
  const chars = [...src];
  // Chinese negators must be words of their own: 非 in 非常 ("very") negates nothing
  const bounds = lex.lang === 'zh' ? wordBoundaries(chars, lex.lang) : null;
  let clause = 0;
  let tokens = 0;
  const maxNeg = 3;
  for (let p = 0; p < chars.length; ) {
    if (CLAUSE_RE.test(chars[p])) {
      clause++;
      p++;
      continue;
    }
    let found: Item | null = null;
    for (let len = Math.min(lex.maxLength, chars.length - p); len >= 1 && !found; len--) {
      const key = chars.slice(p, p + len).join('');
      // a negator is grammar even where the lexicon lists it too (没有 ← AFINN "no")
      if (len <= maxNeg && lex.negators.has(key) && (!bounds || (bounds.has(p) && bounds.has(p + len)))) {
        found = { kind: 'neg', value: 0, start: p, end: p + len, clause };
        break;
      }
      const v = lex.valueOf(key);
      if (v !== undefined && v !== 0) found = { kind: 'hit', value: v, start: p, end: p + len, clause };
    }
    if (/[\p{L}\p{N}]/u.test(chars[p])) tokens++;
    if (found) {
      items.push(found);
      p = found.end;
    } else p++;
  }
  // about two characters a word, so comparative means the same as in spaced scripts
  return { items, tokens: Math.max(1, Math.round(tokens / 2)) };
}

/** Lexicon score with negation: each negator flips the nearest lexicon word in its scope. */
export function lexiconScore(text: string, lex: Lexicon): { score: number; tokens: number } {
  const { items, tokens } = itemsOf(text, lex);
  const scope = lex.match === 'words' ? NEG_WORDS : NEG_CHARS;
  const flipped = new Set<number>();
  let score = 0;
  for (const it of items) if (it.kind === 'hit') score += it.value;
  items.forEach((neg, k) => {
    if (neg.kind !== 'neg') return;
    const after = (): number => items.findIndex((h, j) => j > k && h.kind === 'hit' && !flipped.has(j) && h.clause === neg.clause && h.start - neg.end < scope);
    const before = (): number => {
      for (let j = k - 1; j >= 0; j--) {
        const h = items[j];
        if (h.kind === 'hit' && !flipped.has(j) && h.clause === neg.clause && neg.start - h.end < scope) return j;
      }
      return -1;
    };
    // the usual side first; the other catches "funktioniert nicht" and postposed negation
    let j = lex.negationAfter ? before() : after();
    if (j < 0) j = lex.negationAfter ? after() : before();
    // "ne … pas": two negators, one negation
    const prev = items[k - 1];
    if (prev?.kind === 'neg' && prev.clause === neg.clause && neg.start - prev.end < scope) return;
    if (j >= 0) {
      flipped.add(j);
      score -= 2 * items[j].value;
    } else score += DANGLING_NEGATION;
  });
  return { score, tokens };
}

/**
 * `ratingNorm` is the rating mapped to [0, 1], or null when the row has none; `lang` the corpus
 * language (ISO 639-1).
 */
export function scoreSentiment(text: string, ratingNorm: number | null, lang = 'en'): RowSentiment {
  let score = 0;
  let comparative = 0;
  let hasLexicon = true;
  if (lang === 'en') {
    const r = afinnScore(text);
    score = r.score;
    comparative = r.comparative;
  } else {
    const lex = lexiconFor(lang);
    if (lex) {
      const r = lexiconScore(text, lex);
      score = r.score;
      comparative = r.score / r.tokens;
    } else hasLexicon = false;
  }
  const lexical = Math.max(-1, Math.min(1, comparative * 4));
  const rated = ratingNorm === null ? null : ratingNorm * 2 - 1;
  // no lexicon for the language: the rating is the only voice there is
  const signal = rated === null ? lexical : hasLexicon ? 0.5 * lexical + 0.5 * rated : rated;
  const threshold = ratingNorm === null ? 0.02 : 0.15;
  const label: SentimentLabel = signal > threshold ? 'positive' : signal < -threshold ? 'negative' : 'neutral';
  return { score, comparative, signal, label };
}

/** Which lexicon scores a language, for the report's Method section. */
export function sentimentSource(lang: string): string | null {
  if (lang === 'en') return 'AFINN-165 lexicon (`sentiment` package)';
  return lexiconFor(lang)?.source ?? null;
}

/** Detect the rating scale from the values seen: 1–5, 0–10 (NPS), or 0–100. */
export function ratingScale(ratings: Array<number | null>): { min: number; max: number } | null {
  let max: number | null = null;
  for (const r of ratings) if (r !== null && (max === null || r > max)) max = r;
  return ratingScaleOfMax(max);
}

/** The same scale from the largest rating alone (null: no ratings), for readers that stream rows. */
export function ratingScaleOfMax(max: number | null): { min: number; max: number } | null {
  if (max === null) return null;
  if (max <= 5) return { min: 1, max: 5 };
  if (max <= 10) return { min: 0, max: 10 };
  return { min: 0, max: Math.max(100, max) };
}

export function normaliseRating(r: number | null, scale: { min: number; max: number } | null): number | null {
  if (r === null || scale === null) return null;
  return Math.max(0, Math.min(1, (r - scale.min) / (scale.max - scale.min)));
}
