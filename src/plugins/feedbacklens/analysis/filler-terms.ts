/**
 * Filler: phrases people append whatever their topic ("please fix this ASAP", "this really affects
 * my work", "希望尽快改进", "很影响工作"). Such a phrase is frequent and its words always come
 * together, so term clustering would make it a theme of its own and pull real topics into it (a
 * crash theme disappearing into "尽快改进"). What gives it away is that it says nothing about what
 * the row is about: the rows carrying it talk about the same mix of things as the rows without it.
 *
 * For each frequent term: the centroid of its rows and the centroid of the other rows, both over
 * the vocabulary minus the term and the words of its phrase (terms found in nearly the same rows).
 * A topic's term has rows unlike the rest (their other words are the topic's); filler has rows like
 * the rest. Those terms, with their phrase, are dropped before themes are fitted.
 */
import type { TermVectors } from './term-corpus.js';
import { postingsOf, sortedOverlap } from './term-corpus.js';

/**
 * Rows of a term whose other words are this alike to the other rows' (cosine) make it filler; a term
 * that is part of a fixed phrase (its partners in nearly the same rows) needs less. Measured on
 * exports with filler on half the complaint rows: filler 0.61–0.77; topic words 0.05–0.54, a broad
 * word of the product ("task" in a task app) 0.59 on examples/feedback.csv.
 */
export const FILLER_MIN_COSINE = 0.7;
export const PHRASE_FILLER_MIN_COSINE = 0.6;

export interface FillerTerm {
  id: number;
  /** cosine of its rows' centroid to the other rows' (over the vocabulary minus its phrase) */
  likeness: number;
}

/** The vocabulary ids that are filler (with their phrase partners), and each detected term's likeness. */
export function fillerTerms(v: TermVectors, minCosine = FILLER_MIN_COSINE): { drop: Set<number>; found: FillerTerm[] } {
  const { n, df } = v;
  const drop = new Set<number>();
  const found: FillerTerm[] = [];
  // too few rows to tell a mix from a topic
  if (n < 30) return { drop, found };
  const minRows = Math.max(5, Math.ceil(n * 0.05));
  const candidates: number[] = [];
  for (let id = 0; id < v.vocabTerms.length; id++) if (df[id] >= minRows && df[id] <= n * 0.7) candidates.push(id);
  if (candidates.length === 0) return { drop, found };
  const postings = postingsOf(v, candidates);
  const dim = v.vocabTerms.length;
  const inRows = new Uint8Array(n);
  for (const id of candidates) {
    if (drop.has(id)) continue;
    const rows = postings.get(id) as Int32Array;
    // its phrase: terms carried by nearly the same rows (each way)
    const phrase = new Set<number>([id]);
    for (const other of candidates) {
      if (other === id) continue;
      const o = postings.get(other) as Int32Array;
      const shared = sortedOverlap(rows, o);
      if (shared >= 0.8 * o.length && shared >= 0.5 * rows.length) phrase.add(other);
    }
    inRows.fill(0);
    for (const d of rows) inRows[d] = 1;
    // in a file of several languages, the term's rows are compared with the other rows of their language
    const lang = mostCommonLanguage(v, rows);
    const cIn = new Float64Array(dim);
    const cOut = new Float64Array(dim);
    for (let d = 0; d < n; d++) {
      if (!inRows[d] && v.rowLang[d] !== lang) continue;
      const c = inRows[d] ? cIn : cOut;
      for (let e = v.start[d]; e < v.start[d + 1]; e++) if (!phrase.has(v.ids[e])) c[v.ids[e]] += v.weights[e];
    }
    let dot = 0;
    let a = 0;
    let b = 0;
    for (let t = 0; t < dim; t++) {
      dot += cIn[t] * cOut[t];
      a += cIn[t] * cIn[t];
      b += cOut[t] * cOut[t];
    }
    const likeness = a > 0 && b > 0 ? dot / Math.sqrt(a * b) : 0;
    if (likeness >= minCosine || (phrase.size > 1 && likeness >= PHRASE_FILLER_MIN_COSINE)) {
      found.push({ id, likeness });
      for (const p of phrase) drop.add(p);
    }
  }
  return { drop, found };
}

/** The language most of these rows were read in. */
function mostCommonLanguage(v: TermVectors, rows: Int32Array): number {
  const counts = new Int32Array(v.languages.length);
  for (const d of rows) counts[v.rowLang[d]]++;
  let best = 0;
  for (let l = 1; l < counts.length; l++) if (counts[l] > counts[best]) best = l;
  return best;
}

/** The vectors without the dropped terms: their entries removed, each row unit length again. */
export function withoutTerms(v: TermVectors, drop: ReadonlySet<number>): TermVectors {
  if (drop.size === 0) return v;
  const start = new Int32Array(v.n + 1);
  let total = 0;
  for (let e = 0; e < v.ids.length; e++) if (!drop.has(v.ids[e])) total++;
  const ids = new Int32Array(total);
  const weights = new Float64Array(total);
  const df = Int32Array.from(v.df);
  for (const id of drop) df[id] = 0;
  let p = 0;
  for (let d = 0; d < v.n; d++) {
    const from = p;
    let norm = 0;
    for (let e = v.start[d]; e < v.start[d + 1]; e++) {
      if (drop.has(v.ids[e])) continue;
      ids[p] = v.ids[e];
      weights[p] = v.weights[e];
      norm += v.weights[e] * v.weights[e];
      p++;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let e = from; e < p; e++) weights[e] /= norm;
    start[d + 1] = p;
  }
  return { ...v, start, ids, weights, df };
}
