/**
 * Negation words per language: what flips a sentiment word after (or, in Japanese, before) them,
 * and what is grammar, not a topic, in theme terms. Spanish, Portuguese and German take nlp.js's
 * lists (the packages their lexicons come from); the others are their grammars' closed sets.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

function nlpNegations(pkg: string, exportName: string): string[] {
  const mod = load(pkg) as Record<string, { negations: { words: string[] } }>;
  return mod[exportName].negations.words;
}

export interface Negation {
  words: ReadonlySet<string>;
  /** Japanese negates after the word (使いやすくない); the others before it (no funciona, 不稳定) */
  after: boolean;
}

const BUILDERS: Record<string, () => Negation> = {
  en: () => ({
    words: new Set(['not', 'no', 'never', 'nothing', 'nobody', 'none', 'cannot', "don't", "doesn't", "didn't", "isn't", "won't", "can't"]),
    after: false,
  }),
  es: () => ({ words: new Set(nlpNegations('@nlpjs/lang-es', 'SentimentEs')), after: false }),
  pt: () => ({ words: new Set(nlpNegations('@nlpjs/lang-pt', 'SentimentPt')), after: false }),
  de: () => ({ words: new Set(nlpNegations('@nlpjs/lang-de', 'SentimentDe')), after: false }),
  // nlp.js ships none for French: ne … pas / jamais / rien / aucun
  fr: () => ({ words: new Set(['ne', 'n', 'pas', 'jamais', 'rien', 'aucun', 'aucune', 'sans']), after: false }),
  // HowNet's negation words (知网 否定词; 休 left out, it mostly means "rest"), their common
  // compounds, and the traditional forms
  zh: () => ({
    words: new Set([
      '不',
      '没',
      '没有',
      '无',
      '非',
      '未',
      '别',
      '莫',
      '勿',
      '甭',
      '不是',
      '不要',
      '不可',
      '不能',
      '不会',
      '没法',
      '无法',
      '毫无',
      '从不',
      '並非',
      '沒',
      '沒有',
      '無',
      '無法',
    ]),
    after: false,
  }),
  // the auxiliary negation of Japanese grammar: plain, adverbial, past and polite forms, classical ず/ぬ
  ja: () => ({ words: new Set(['ない', 'なく', 'なかっ', 'ません', 'ず', 'ぬ']), after: true }),
};

const cache = new Map<string, Negation | null>();

/** The negation words of a language (ISO 639-1), or null when Runtrail has none for it. */
export function negationFor(lang: string): Negation | null {
  let n = cache.get(lang);
  if (n === undefined) {
    n = BUILDERS[lang]?.() ?? null;
    cache.set(lang, n);
  }
  return n;
}
