/**
 * The terms one feedback row contributes to theme finding: its greeting and sign-off cut
 * (greetings.ts), its words taken in the row's own language (a Chinese row by jieba, a Latin row
 * by the stop words and stemmer of the language it is written in, which in a mixed file need not
 * be the file's), unigram and bigram stems, plus the concept terms of the bilingual feedback
 * vocabulary (feedback-concepts.ts) that link one topic across languages.
 */
import { scriptLanguage } from '../../shared/text-language.js';
import { contentTokens, termsOfTokens } from '../../shared/tokenize.js';
import { conceptTerms } from './feedback-concepts.js';
import { withoutGreetings } from './greetings.js';
import { rowLatinLanguage } from './row-language.js';

export interface RowTerms {
  terms: string[];
  /** how each term was written (a concept term: the term itself) */
  surfaces: string[];
  /** the language the row's words were read in */
  lang: string;
}

/** `fileLang` is the file's Latin-script language (text-language.ts), the default for a Latin row. */
export function feedbackTerms(text: string, fileLang: string): RowTerms {
  const body = withoutGreetings(text);
  const script = scriptLanguage(body);
  const lang = script ?? rowLatinLanguage(body, fileLang);
  const tokens = contentTokens(body, script ? fileLang : lang);
  const { terms, surfaces } = termsOfTokens(tokens);
  const concepts = conceptTerms(tokens.map((t) => t.word));
  return { terms: [...terms, ...concepts], surfaces: [...surfaces, ...concepts], lang };
}
