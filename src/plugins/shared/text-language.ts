/**
 * The language of a body of texts (a feedback file, a document): scripts written without spaces
 * are told apart by script (kana → Japanese, Han → Chinese, Hangul → Korean, Thai), Latin-script
 * text by `franc-min` trigram profiles over a sample of the whole corpus — one short row says
 * too little, hundreds say plenty.
 */
import { franc } from 'franc-min';

export interface CorpusLanguage {
  /** ISO 639-1 code of the language most rows are written in */
  code: string;
  /** ISO 639-1 code of the corpus's Latin-script language (its words in any row use its stop words and stemmer) */
  latin: string;
  /** share of sampled rows in `code` */
  share: number;
}

// franc's ISO 639-3 codes for the languages Runtrail has stop words for, mapped to ISO 639-1
const FRANC_TO_ISO1: Record<string, string> = {
  eng: 'en',
  spa: 'es',
  fra: 'fr',
  deu: 'de',
  por: 'pt',
  ita: 'it',
  nld: 'nl',
  vie: 'vi',
  ind: 'id',
  tur: 'tr',
  pol: 'pl',
  swe: 'sv',
  dan: 'da',
  nob: 'no',
  fin: 'fi',
  ces: 'cs',
  ron: 'ro',
  hun: 'hu',
  cat: 'ca',
};
const FRANC_ONLY = Object.keys(FRANC_TO_ISO1);

const KANA_RE = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HAN_RE = /\p{Script=Han}/u;
const HANGUL_RE = /\p{Script=Hangul}/u;
const THAI_RE = /\p{Script=Thai}/u;
const LATIN_RE = /\p{Script=Latin}/u;

/** The script-decided language of one text, or null when it is Latin (or no letters). */
export function scriptLanguage(text: string): 'ja' | 'zh' | 'ko' | 'th' | null {
  if (KANA_RE.test(text)) return 'ja';
  if (HAN_RE.test(text)) return 'zh';
  if (HANGUL_RE.test(text)) return 'ko';
  if (THAI_RE.test(text)) return 'th';
  return null;
}

const SAMPLE = 400;
const LATIN_CHARS = 10_000;

/**
 * The rows `detectCorpusLanguage` looks at in a corpus of n: every step-th from the first. A
 * reader that keeps rows on disk fetches just these; detecting on them alone gives the same
 * answer (fewer than 2 × SAMPLE of them, so all are looked at).
 */
export function corpusSampleIndices(n: number): number[] {
  const step = Math.max(1, Math.floor(n / SAMPLE));
  const out: number[] = [];
  for (let i = 0; i < n; i += step) out.push(i);
  return out;
}

export function detectCorpusLanguage(texts: readonly string[]): CorpusLanguage {
  const step = Math.max(1, Math.floor(texts.length / SAMPLE));
  const counts = new Map<string, number>();
  const latin: string[] = [];
  let latinChars = 0;
  let sampled = 0;
  for (let i = 0; i < texts.length; i += step) {
    const t = texts[i];
    sampled++;
    const s = scriptLanguage(t);
    if (s) counts.set(s, (counts.get(s) ?? 0) + 1);
    else counts.set('latin', (counts.get('latin') ?? 0) + 1);
    if (latinChars < LATIN_CHARS && LATIN_RE.test(t)) {
      latin.push(t);
      latinChars += t.length;
    }
  }
  const guess = latin.length ? franc(latin.join('\n'), { only: FRANC_ONLY, minLength: 3 }) : 'und';
  const latinCode = FRANC_TO_ISO1[guess] ?? 'en';
  let code = latinCode;
  let best = -1;
  for (const [k, n] of counts) {
    if (n > best) [code, best] = [k === 'latin' ? latinCode : k, n];
  }
  return { code, latin: latinCode, share: sampled ? best / sampled : 0 };
}
