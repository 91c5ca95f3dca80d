/**
 * The language of one Latin-script row in a file of several: a vote of stop words. A sentence of
 * feedback carries several function words ("the", "my", "is" / "la", "mis", "se"), which tell
 * English from Spanish far more reliably on one short row than trigram profiles do. The file's own
 * Latin language wins ties, so a row with no function words stays in it.
 */
import { stopWordsFor } from '../../shared/stop-words.js';

/** Languages a row of a Latin-script file may be in besides the file's own. */
const CANDIDATES = ['en', 'es', 'fr', 'de', 'pt'];
const WORD_RE = /\p{L}+/gu;

/** stop word → the candidates (bit i: CANDIDATES[i]) whose stop word it is: one lookup per word */
let stopBits: Map<string, number> | null = null;

function bitsOf(): Map<string, number> {
  if (!stopBits) {
    stopBits = new Map();
    CANDIDATES.forEach((lang, i) => {
      for (const w of stopWordsFor(lang)) stopBits?.set(w, (stopBits.get(w) ?? 0) | (1 << i));
    });
  }
  return stopBits;
}

/** ISO 639-1 code of the row's language; `fileLatin` unless another candidate has more stop words in it. */
export function rowLatinLanguage(text: string, fileLatin: string): string {
  const words = text.toLowerCase().match(WORD_RE);
  if (!words || words.length < 3) return fileLatin;
  const bits = bitsOf();
  const hits = new Int32Array(CANDIDATES.length);
  for (const w of words) {
    const b = bits.get(w);
    if (b !== undefined) for (let i = 0; i < CANDIDATES.length; i++) if (b & (1 << i)) hits[i]++;
  }
  const own = CANDIDATES.indexOf(fileLatin);
  let best = fileLatin;
  let bestHits = own >= 0 ? hits[own] : 0;
  CANDIDATES.forEach((lang, i) => {
    if (lang !== fileLatin && hits[i] > bestHits + 1) [best, bestHits] = [lang, hits[i]];
  });
  return best;
}
