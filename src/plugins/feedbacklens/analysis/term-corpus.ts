/**
 * The terms of a body of rows, kept compactly: one dictionary of terms (unigram and bigram stems,
 * in the order they first appear), document frequencies, display forms, and each row's distinct
 * terms with their counts in flat typed arrays instead of a Map per row. Rows are added one at a
 * time, so a reader can stream them; `vectorise` then gives the TF-IDF vectors clustering needs.
 */
import { feedbackTerms } from './feedback-terms.js';

/** A growable Int32Array: amortised appends without a JS array's per-element boxing. */
class IntList {
  data: Int32Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Int32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      // 1.5×: less slack than doubling on the corpus's largest arrays
      const next = new Int32Array(Math.ceil(this.data.length * 1.5) + 16);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i];
  }
  set(i: number, v: number): void {
    this.data[i] = v;
  }
}

/** Term counts within a row: almost all 1, so a byte each, the rare count of 255 or more on the side. */
class CountList {
  private data = new Uint8Array(8192);
  private readonly big = new Map<number, number>();
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint8Array(Math.ceil(this.data.length * 1.5));
      next.set(this.data);
      this.data = next;
    }
    this.set(this.length++, v);
  }
  get(i: number): number {
    const v = this.data[i];
    return v === 255 ? (this.big.get(i) as number) : v;
  }
  set(i: number, v: number): void {
    if (v >= 255) {
      this.data[i] = 255;
      this.big.set(i, v);
    } else this.data[i] = v;
  }
}

/** TF-IDF vectors over the vocabulary, unit length, as sparse rows in flat arrays. */
export interface TermVectors {
  n: number;
  /** vocabulary id → term (stem or "stem stem") */
  vocabTerms: string[];
  idf: number[];
  /** row d's entries are [start[d], start[d + 1]) of ids/weights, in the order the row's terms first appear */
  start: Int32Array;
  ids: Int32Array;
  weights: Float64Array;
  /** vocabulary id → how many rows carry it (rows carrying a term: `postingsOf`) */
  df: Int32Array;
  /** term → vocabulary id */
  vocabIndex: Map<string, number>;
  /** vocabulary id → display form (the term's most frequent surface) */
  labels: string[];
  /** each row's language, as an index into `languages` */
  rowLang: Uint8Array;
  /** the languages rows were read in (ISO 639-1) */
  languages: string[];
}

export class TermCorpus {
  private readonly dict = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly df = new IntList();
  /** one surface (the usual case) or all of them with their counts */
  private readonly surfaces: Array<string | Map<string, number>> = [];
  private readonly surfaceCount = new IntList();
  private readonly docStart = new IntList();
  private readonly docTerm = new IntList(8192);
  private docCount = new CountList();
  /** vectorise() hands the rows' arrays over: the corpus is spent */
  private spent = false;
  /** per term: the last row that carried it, and where in that row's entries (dedup without a Map per row) */
  private readonly lastDoc = new IntList();
  private readonly slot = new IntList();
  private readonly rowLang = new IntList();
  private readonly languages: string[] = [];

  /**
   * `lang`: the file's language (ISO 639-1); `latin`: its Latin-script language, what a Latin row is
   * read in unless its own stop words say otherwise (feedback-terms.ts).
   */
  constructor(
    readonly lang = 'en',
    readonly latin = lang,
  ) {
    this.docStart.push(0);
  }

  get size(): number {
    return this.docStart.length - 1;
  }

  /** Adds one row's text; returns its index. */
  add(text: string): number {
    if (this.spent) throw new Error('TermCorpus.add after vectorise()');
    const d = this.size;
    const { terms, surfaces, lang } = feedbackTerms(text, this.latin);
    let li = this.languages.indexOf(lang);
    if (li < 0) li = this.languages.push(lang) - 1;
    this.rowLang.push(li);
    for (let k = 0; k < terms.length; k++) {
      const term = terms[k];
      let id = this.dict.get(term);
      if (id === undefined) {
        id = this.terms.length;
        this.dict.set(term, id);
        this.terms.push(term);
        this.df.push(0);
        this.surfaces.push('');
        this.surfaceCount.push(0);
        this.lastDoc.push(-1);
        this.slot.push(0);
      }
      if (this.lastDoc.get(id) === d) {
        const at = this.slot.get(id);
        this.docCount.set(at, this.docCount.get(at) + 1);
      } else {
        this.lastDoc.set(id, d);
        this.slot.set(id, this.docTerm.length);
        this.docTerm.push(id);
        this.docCount.push(1);
        this.df.set(id, this.df.get(id) + 1);
      }
      this.countSurface(id, surfaces[k]);
    }
    this.docStart.push(this.docTerm.length);
    return d;
  }

  private countSurface(id: number, surface: string): void {
    const s = this.surfaces[id];
    if (typeof s === 'string') {
      if (s === '' && this.surfaceCount.get(id) === 0) {
        this.surfaces[id] = surface;
        this.surfaceCount.set(id, 1);
      } else if (s === surface) this.surfaceCount.set(id, this.surfaceCount.get(id) + 1);
      else
        this.surfaces[id] = new Map([
          [s, this.surfaceCount.get(id)],
          [surface, 1],
        ]);
    } else s.set(surface, (s.get(surface) ?? 0) + 1);
  }

  /** The most frequent surface of a term; ties go to the one that sorts first. */
  label(term: string): string {
    const id = this.dict.get(term);
    return id === undefined ? term : this.labelOf(id);
  }

  private labelOf(id: number): string {
    const term = this.terms[id];
    const s = this.surfaces[id];
    if (typeof s === 'string') return s === '' ? term : s;
    let best = term;
    let bestCount = -1;
    for (const [surface, c] of s) if (c > bestCount || (c === bestCount && surface < best)) [best, bestCount] = [surface, c];
    return best;
  }

  /**
   * TF-IDF vectors over the terms whose document frequency lies in [minDf, maxDf] and that carry
   * no ignored word; weights (1 + ln tf) × idf, then unit length. Self-contained: the corpus can
   * be dropped afterwards.
   */
  vectorise(minDf: number, maxDf: number, ignore: ReadonlySet<string>): TermVectors {
    const n = this.size;
    const vocabOf = new Int32Array(this.terms.length).fill(-1);
    const vocabTerms: string[] = [];
    const labels: string[] = [];
    const idf: number[] = [];
    const vocabIndex = new Map<string, number>();
    for (let id = 0; id < this.terms.length; id++) {
      const d = this.df.get(id);
      const term = this.terms[id];
      if (d < minDf || d > maxDf || term.split(' ').some((w) => ignore.has(w))) continue;
      vocabOf[id] = vocabTerms.length;
      vocabIndex.set(term, vocabTerms.length);
      vocabTerms.push(term);
      labels.push(this.labelOf(id));
      idf.push(Math.log((1 + n) / (1 + d)) + 1);
    }
    // exact-size arrays: count the vocabulary entries first
    let total = 0;
    for (let e = 0; e < this.docTerm.length; e++) if (vocabOf[this.docTerm.get(e)] >= 0) total++;
    const start = new Int32Array(n + 1);
    const ids = new Int32Array(total);
    const weights = new Float64Array(total);
    const counts = new Int32Array(vocabTerms.length);
    let p = 0;
    for (let d = 0; d < n; d++) {
      const from = p;
      let norm = 0;
      for (let e = this.docStart.get(d); e < this.docStart.get(d + 1); e++) {
        const v = vocabOf[this.docTerm.get(e)];
        if (v < 0) continue;
        const w = (1 + Math.log(this.docCount.get(e))) * idf[v];
        ids[p] = v;
        weights[p++] = w;
        norm += w * w;
        counts[v]++;
      }
      norm = Math.sqrt(norm);
      if (norm !== 0) for (let e = from; e < p; e++) weights[e] = weights[e] / norm;
      start[d + 1] = p;
    }
    const rowLang = Uint8Array.from(this.rowLang.data.subarray(0, n));
    this.release();
    return { n, vocabTerms, idf, start, ids, weights, df: counts, vocabIndex, labels, rowLang, languages: [...this.languages] };
  }

  /** Drops what only adding rows needs; the vectors are self-contained. */
  private release(): void {
    this.spent = true;
    this.docTerm.data = new Int32Array(0);
    this.docStart.data = new Int32Array(0);
    this.lastDoc.data = new Int32Array(0);
    this.slot.data = new Int32Array(0);
    this.docCount = new CountList();
    this.dict.clear();
  }
}

/**
 * The rows carrying each of these vocabulary ids, ascending, in one pass over the vectors: only the
 * few terms that may seed a theme need theirs (every term's postings were as large as the vectors'
 * ids, megabytes at a 100,000-row analysis's peak).
 */
export function postingsOf(v: TermVectors, wanted: readonly number[]): Map<number, Int32Array> {
  const slot = new Int32Array(v.vocabTerms.length).fill(-1);
  const lists = wanted.map((id, k) => {
    slot[id] = k;
    return new Int32Array(v.df[id]);
  });
  const fill = new Int32Array(wanted.length);
  for (let d = 0; d < v.n; d++) {
    for (let e = v.start[d]; e < v.start[d + 1]; e++) {
      const k = slot[v.ids[e]];
      if (k >= 0) lists[k][fill[k]++] = d;
    }
  }
  return new Map(wanted.map((id, k) => [id, lists[k]]));
}

/** Rows two postings share; both ascending (a merge, not a Set lookup per row). */
export function sortedOverlap(a: Int32Array, b: Int32Array): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      n++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return n;
}
