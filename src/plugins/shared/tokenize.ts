/**
 * Word-level text processing shared by theme clustering, evidence selection and summaries.
 * Scripts written with spaces are split on letters; scripts written without them (Chinese,
 * Japanese, Thai, …) are segmented into words by `Intl.Segmenter` (ICU's dictionaries, built
 * into Node). Stop words per language come from stop-words.ts; `lang` is the corpus language
 * (text-language.ts), which decides the stop words and stemmer of Latin-script words.
 */
import { createRequire } from 'node:module';
import { chineseWords } from './chinese-words.js';
import { negationFor } from './negators.js';
import { stopWordsFor } from './stop-words.js';

const ENGLISH_STOP = stopWordsFor('en');
const NO_WORDS: ReadonlySet<string> = new Set();

/** Negators are grammar too ("没有", "nunca"): they flip sentiment, they name no theme. */
function negators(lang: string): ReadonlySet<string> {
  return negationFor(lang)?.words ?? NO_WORDS;
}

export function isStopWord(w: string, lang = 'en'): boolean {
  return ENGLISH_STOP.has(w) || (lang !== 'en' && (stopWordsFor(lang).has(w) || negators(lang).has(w)));
}

const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 50_000;

/** Light suffix stripping so sync/syncing/synced and crash/crashes/crashed share one stem. */
export function stem(word: string): string {
  const hit = stemCache.get(word);
  if (hit !== undefined) return hit;
  const s = computeStem(word);
  // words repeat a lot across rows; a bounded memo keeps 10,000-row files fast
  if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
  stemCache.set(word, s);
  return s;
}

function computeStem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 5 && w.endsWith('ly')) w = w.slice(0, -2);
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

interface NlpStemmer {
  stemWord(word: string): string;
}
interface NlpNormalizer {
  normalize(text: string): string;
}
type NlpLang = Record<string, new () => NlpStemmer & NlpNormalizer>;

// Snowball-family stemmers of nlp.js (the same ones its sentiment lexicons are keyed by; English: Porter2)
const NLP_STEMMERS: Record<string, { pkg: string; name: string }> = {
  en: { pkg: '@nlpjs/lang-en', name: 'En' },
  es: { pkg: '@nlpjs/lang-es', name: 'Es' },
  fr: { pkg: '@nlpjs/lang-fr', name: 'Fr' },
  de: { pkg: '@nlpjs/lang-de', name: 'De' },
  pt: { pkg: '@nlpjs/lang-pt', name: 'Pt' },
};
const load = createRequire(import.meta.url);
const langStemmers = new Map<string, ((w: string) => string) | null>();

/** The stemmer of a language (ISO 639-1): nlp.js's for en/es/fr/de/pt, the light suffix stripper otherwise. */
export function stemmerFor(lang: string): (w: string) => string {
  if (!NLP_STEMMERS[lang]) return stem;
  let s = langStemmers.get(lang);
  if (s === undefined) {
    const { pkg, name } = NLP_STEMMERS[lang];
    const mod = load(pkg) as NlpLang;
    const stemmer = new mod[`Stemmer${name}`]();
    const normalizer = new mod[`Normalizer${name}`]();
    const memo = new Map<string, string>();
    s = (w: string): string => {
      let r = memo.get(w);
      if (r === undefined) {
        r = stemmer.stemWord(normalizer.normalize(w));
        if (memo.size >= STEM_CACHE_MAX) memo.clear();
        memo.set(w, r);
      }
      return r;
    };
    langStemmers.set(lang, s);
  }
  return s ?? stem;
}

export interface Token {
  /** lower-cased surface form */
  word: string;
  stem: string;
  /** index in the full token stream, stop words included (for adjacency) */
  pos: number;
  /** written in a script without spaces: joins its neighbours without a space in labels */
  spaceless?: boolean;
}

/** Longer "words" are ids, hashes or URLs, not vocabulary. */
const MAX_WORD = 30;
const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
const SPACELESS_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const KANA_RE = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HAN_ONE_RE = /^\p{Script=Han}$/u;
const HIRAGANA_ONLY_RE = /^\p{Script=Hiragana}+$/u;
const KATAKANA_RE = /^[\p{Script=Katakana}ー]+$/u;
const KANJI_OKURIGANA_RE = /^(\p{Script=Han}+)\p{Script=Hiragana}+$/u;
const WORD_CHAR_RE = /[\p{L}\p{N}]/u;
const CLAUSE_RE = /[,.;:!?，。、；：！？…\n]/u;

const segmenters = new Map<string, Intl.Segmenter>();
function segmenter(locale: string): Intl.Segmenter {
  let s = segmenters.get(locale);
  if (!s) segmenters.set(locale, (s = new Intl.Segmenter(locale, { granularity: 'word' })));
  return s;
}

/** The language a spaceless-script text is segmented and filtered as: Japanese when it has kana. */
function spacelessLang(src: string): string {
  if (KANA_RE.test(src)) return 'ja';
  if (/\p{Script=Thai}/u.test(src)) return 'th';
  return 'zh';
}

interface Segment {
  word: string;
  /** a clause boundary (punctuation) precedes it */
  breakBefore: boolean;
}

/**
 * Word segments of a text in a spaceless script: Chinese by jieba (its dictionary and HMM), the
 * others by ICU. ICU splits words missing from its dictionary into single characters (スマ|ホ):
 * runs of katakana, and runs of single Han characters that are not stop words, are joined back,
 * the usual unknown-word rule of CJK tokenizers.
 */
function segmentWords(src: string, lang: string): Segment[] {
  const stop = stopWordsFor(lang);
  const raw: Segment[] = [];
  let pendingBreak = false;
  if (lang === 'zh') {
    // jieba: a Chinese dictionary and an HMM for unknown words (chinese-words.ts)
    for (const w of chineseWords(src)) {
      if (!WORD_CHAR_RE.test(w)) {
        if (CLAUSE_RE.test(w)) pendingBreak = true;
        continue;
      }
      raw.push({ word: w, breakBefore: pendingBreak });
      pendingBreak = false;
    }
    return raw;
  }
  for (const s of segmenter(lang).segment(src)) {
    if (!s.isWordLike) {
      if (CLAUSE_RE.test(s.segment)) pendingBreak = true;
      continue;
    }
    raw.push({ word: s.segment, breakBefore: pendingBreak });
    pendingBreak = false;
  }
  const out: Segment[] = [];
  for (const seg of raw) {
    const prev = out[out.length - 1];
    const joinable = (w: string): boolean => (HAN_ONE_RE.test(w) && !stop.has(w)) || KATAKANA_RE.test(w);
    if (prev && !seg.breakBefore && joinable(seg.word) && joinable(prev.word) && KATAKANA_RE.test(seg.word) === KATAKANA_RE.test(prev.word)) {
      // only single Han characters join Han characters (a dictionary word stays whole)
      if (KATAKANA_RE.test(seg.word) || [...prev.word].every((c) => HAN_ONE_RE.test(c) && !stop.has(c))) {
        prev.word += seg.word;
        continue;
      }
    }
    out.push({ ...seg });
  }
  return out;
}

function spacelessStem(word: string, lang: string): string {
  // 落ちる/落ちます/落ち → 落: okurigana inflect, the kanji carry the word
  if (lang === 'ja') return KANJI_OKURIGANA_RE.exec(word)?.[1] ?? word;
  return word;
}

/**
 * Content tokens of a text: lower-cased; stop words, pure numbers and 1–2 letter words (in
 * spaced scripts) dropped. `lang` is the corpus language (ISO 639-1), default English.
 */
export function contentTokens(text: string, lang = 'en'): Token[] {
  const lower = text.toLowerCase();
  // NFKC and the script check only matter outside ASCII; skipping them keeps 10,000-row files fast
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, control characters included
  const ascii = !/[^\x00-\x7f]/.test(lower);
  const src = ascii ? lower : lower.normalize('NFKC');
  if (!ascii && SPACELESS_RE.test(src)) return spacelessTokens(src, lang);
  const out: Token[] = [];
  let pos = 0;
  const stemOf = stemmerFor(lang);
  const extraStop = lang === 'en' ? null : stopWordsFor(lang);
  const neg = lang === 'en' ? null : negators(lang);
  const words = ascii ? asciiWords(src) : Array.from(src.matchAll(WORD_RE), (m) => m[0].replace(/['’].*$/, ''));
  for (const word of words) {
    const p = pos++;
    if (word.length < 3 || word.length > MAX_WORD || (ascii ? isAsciiDigits(word) : /^\p{N}+$/u.test(word)) || ENGLISH_STOP.has(word)) continue;
    if (extraStop && (extraStop.has(word) || neg?.has(word))) continue;
    out.push({ word, stem: stemOf(word), pos: p });
  }
  return out;
}

const isAsciiLower = (c: number): boolean => c >= 97 && c <= 122;
const isAsciiDigit = (c: number): boolean => c >= 48 && c <= 57;

function isAsciiDigits(w: string): boolean {
  for (let i = 0; i < w.length; i++) if (!isAsciiDigit(w.charCodeAt(i))) return false;
  return true;
}

/**
 * What WORD_RE matches in lower-cased ASCII text, each match cut at its apostrophe ("don't" → "don"),
 * found without the Unicode regex: a 10,000-row export has some 150,000 words.
 */
function asciiWords(src: string): string[] {
  const out: string[] = [];
  const n = src.length;
  let i = 0;
  while (i < n) {
    const c = src.charCodeAt(i);
    if (!isAsciiLower(c) && !isAsciiDigit(c)) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && (isAsciiLower(src.charCodeAt(i)) || isAsciiDigit(src.charCodeAt(i)))) i++;
    out.push(src.slice(start, i));
    // the regex's match goes on over "'s", "'t" (an apostrophe and letters): one word, one position
    while (i + 1 < n && src.charCodeAt(i) === 39 && isAsciiLower(src.charCodeAt(i + 1))) {
      i++;
      while (i < n && isAsciiLower(src.charCodeAt(i))) i++;
    }
  }
  return out;
}

function spacelessTokens(src: string, lang: string): Token[] {
  const segLang = spacelessLang(src);
  const stop = stopWordsFor(segLang);
  const neg = negators(segLang);
  // Latin words inside CJK text ("PDF", "bug") are English far more often than not
  const stemOf = stemmerFor(NLP_STEMMERS[lang] ? lang : 'en');
  const out: Token[] = [];
  let pos = 0;
  for (const { word, breakBefore } of segmentWords(src, segLang)) {
    // a clause boundary breaks adjacency, so no two-word term spans "，"
    if (breakBefore) pos++;
    const p = pos++;
    if (SPACELESS_RE.test(word)) {
      if (stop.has(word) || neg.has(word) || (segLang === 'ja' && HIRAGANA_ONLY_RE.test(word) && word.length <= 2)) continue;
      out.push({ word, stem: spacelessStem(word, segLang), pos: p, spaceless: true });
      continue;
    }
    // Latin words and digits inside CJK text ("PDF", "iPad")
    if (word.length < 3 || word.length > MAX_WORD || /^\p{N}+$/u.test(word) || isStopWord(word, lang)) continue;
    out.push({ word, stem: stemOf(word), pos: p });
  }
  return out;
}

/** A single character of a spaceless script is a word piece, not a term of its own. */
function isTerm(t: Token): boolean {
  return !t.spaceless || [...t.word].length > 1;
}

/**
 * Unigram stems plus bigrams of adjacent content words ("calendar sync", "闪退"), keyed by stem;
 * `surfaces[i]` is how `terms[i]` was written there.
 */
export function termsOf(text: string, lang = 'en'): { terms: string[]; surfaces: string[] } {
  return termsOfTokens(contentTokens(text, lang));
}

/** `termsOf` over tokens already taken. */
export function termsOfTokens(toks: Token[]): { terms: string[]; surfaces: string[] } {
  const terms: string[] = [];
  const surfaces: string[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (isTerm(t)) {
      terms.push(t.stem);
      surfaces.push(t.word);
    }
    const next = toks[i + 1];
    if (next && next.pos === t.pos + 1 && next.stem !== t.stem) {
      terms.push(`${t.stem} ${next.stem}`);
      // Chinese and Japanese write words together: "同步失败", not "同步 失败"
      surfaces.push(t.spaceless && next.spaceless ? `${t.word}${next.word}` : `${t.word} ${next.word}`);
    }
  }
  return { terms, surfaces };
}
