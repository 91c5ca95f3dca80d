/**
 * Themes by term clustering: TF-IDF vectors over unigram and bigram stems, seeds from greedy
 * grouping of salient co-occurring terms, then spherical k-means (cosine) to settle membership.
 * Nothing here knows any topic in advance; labels come from each cluster's most distinctive terms.
 * The fitted model also places rows it was not fitted on (a bounded sample of a large file fits,
 * every row is then placed): nearest k-means centroid, as k-means itself assigns.
 *
 * Over 400 lines on purpose: the steps share the vectors and the vocabulary they are fitted on, and
 * the clustering is judged as a whole (the analysis tests); split, each part would be half a method.
 */
import { contentTokens, termsOf } from '../../shared/tokenize.js';
import { fillerTerms, withoutTerms } from './filler-terms.js';
import { postingsOf, sortedOverlap, TermCorpus, type TermVectors } from './term-corpus.js';

export interface ThemeCluster {
  /** document indices, most central first */
  members: number[];
  /** stems (or "stem stem" bigrams), most distinctive first */
  keyTerms: string[];
  /** display forms of keyTerms */
  keyTermLabels: string[];
}

export interface ClusteringResult {
  clusters: ThemeCluster[];
  /** documents that share no salient term with any theme */
  unclustered: number[];
  /** most frequent salient terms over the corpus (display forms) with their document counts */
  topTerms: Array<{ term: string; rows: number }>;
}

/** Where a row not in the fitted corpus goes. */
export interface Placement {
  /** index into `clusters`, or -1: no theme */
  cluster: number;
  /** cosine to that theme's centroid (0 when none): orders members, most central first */
  sim: number;
  /** vocabulary ids the row carries, each once (for document counts over every row) */
  terms: number[];
}

export interface ThemeModel extends ClusteringResult {
  /** the vocabulary (stems), by id, and each term's display form */
  vocabTerms: string[];
  labels: string[];
  /** places one text the way the fitted rows were assigned */
  place(text: string): Placement;
  /** the top terms again, from document counts taken over other rows (by vocabulary id) */
  topTermsFrom(df: ArrayLike<number>): Array<{ term: string; rows: number }>;
}

/** A sparse vector's entries [from, to) of `ids`/`weights` · a dense centroid: no hash lookups in the k-means inner loop. */
function sparseDot(ids: ArrayLike<number>, weights: ArrayLike<number>, from: number, to: number, centroid: Float64Array): number {
  let s = 0;
  for (let e = from; e < to; e++) s += weights[e] * centroid[ids[e]];
  return s;
}

/** Fitted row d · a centroid (both unit length: their cosine). */
function cosine(v: TermVectors, d: number, centroid: Float64Array): number {
  return sparseDot(v.ids, v.weights, v.start[d], v.start[d + 1], centroid);
}

export function targetThemeCount(n: number): number {
  if (n < 4) return 1;
  return Math.max(2, Math.min(8, Math.round(Math.sqrt(n) / 1.6)));
}

export interface ClusterOptions {
  maxThemes?: number;
  /** words that name the subject itself (e.g. the product name): true of every theme, so no theme's label */
  ignoreWords?: string[];
  /** corpus language (ISO 639-1): stop words and stemmer of its words */
  lang?: string;
}

/** Stems of the ignored words, in the corpus language. */
export function ignoredStems(words: string[], lang: string): Set<string> {
  return new Set(words.flatMap((w) => contentTokens(w, lang).map((t) => t.stem)));
}

export function clusterThemes(texts: string[], opts: ClusterOptions = {}): ClusteringResult {
  const corpus = new TermCorpus(opts.lang ?? 'en');
  for (const t of texts) corpus.add(t);
  const { clusters, unclustered, topTerms } = fitThemes(corpus, opts);
  return { clusters, unclustered, topTerms };
}

const NO_THEME: Placement = { cluster: -1, sim: 0, terms: [] };

function rankTopTerms(vocabTerms: string[], labels: string[], df: ArrayLike<number>): Array<{ term: string; rows: number }> {
  return (
    vocabTerms
      .map((_, id) => ({ term: labels[id], rows: df[id] }))
      // filler terms count no rows
      .filter((t) => t.rows > 0)
      .sort((a, b) => b.rows - a.rows || a.term.localeCompare(b.term))
      .slice(0, 15)
  );
}

/** Clusters the corpus's rows; the corpus is not needed afterwards. */
export function fitThemes(corpus: TermCorpus, opts: ClusterOptions = {}): ThemeModel {
  const n = corpus.size;
  const lang = corpus.lang;
  const ignore = ignoredStems(opts.ignoreWords ?? [], lang);

  // Vocabulary: terms frequent enough to define a theme, but not so common they say nothing.
  const minDf = n < 20 ? 1 : Math.max(2, Math.floor(n * 0.004));
  const maxDf = n < 10 ? n : Math.ceil(n * 0.7);
  // filler ("please fix this ASAP", 希望尽快改进) is no topic: its terms are dropped before seeding
  const all = corpus.vectorise(minDf, maxDf, ignore);
  const vectors = withoutTerms(all, fillerTerms(all).drop);
  const { vocabTerms, idf, df, labels } = vectors;
  const dim = vocabTerms.length;

  const topTerms = rankTopTerms(vocabTerms, labels, df);

  // Seeds: walk terms by salience (df × idf × coherence²); coherence, how alike the rows carrying
  // a term are, keeps broad words ("task" in a task app) from seeding a catch-all theme.
  const k = Math.min(opts.maxThemes ?? 8, targetThemeCount(n));
  const seedPool = vocabTerms
    .map((_, id) => id)
    .filter((id) => df[id] >= Math.min(2, n) && (n < 20 || df[id] <= n * (n >= 100 ? 0.25 : 0.6)))
    .sort((a, b) => df[b] * idf[b] - df[a] * idf[a] || vocabTerms[a].localeCompare(vocabTerms[b]))
    .slice(0, 80);
  const postings = postingsOf(vectors, seedPool);
  const salience = new Map<number, number>();
  for (const id of seedPool) {
    // a deterministic sample is enough to measure how alike a term's rows are
    const all = postings.get(id) as Int32Array;
    const step = Math.max(1, Math.floor(all.length / 300));
    const docs = step === 1 ? all : strided(all, step);
    const c = centroidOf(docs, vectors, dim);
    let coh = 0;
    for (const d of docs) coh += cosine(vectors, d, c);
    coh /= docs.length;
    salience.set(id, all.length * idf[id] * coh * coh);
  }
  const order = [...seedPool].sort((a, b) => (salience.get(b) ?? 0) - (salience.get(a) ?? 0) || vocabTerms[a].localeCompare(vocabTerms[b]));
  // Overlap is measured against each group's seed term only, so groups do not snowball.
  const groups: Array<{ seed: Int32Array; docs: Set<number> }> = [];
  for (const id of order) {
    const docs = postings.get(id) as Int32Array;
    let joined = false;
    for (const g of groups) {
      if (sortedOverlap(docs, g.seed) / Math.min(docs.length, g.seed.length) >= 0.5) {
        for (const d of docs) g.docs.add(d);
        joined = true;
        break;
      }
    }
    if (!joined && groups.length < k) groups.push({ seed: docs, docs: new Set(docs) });
  }

  let centroids: Float64Array[] = groups.map((g) => centroidOf([...g.docs], vectors, dim));
  let assign = new Int32Array(n).fill(-1);
  // rows with the same vector ("great app", a template's text) get the same centroid: found once
  const same = firstOfSameVector(vectors);
  for (let iter = 0; iter < 12 && centroids.length > 0; iter++) {
    const next = new Int32Array(n).fill(-1);
    const matrix = new CentroidMatrix(centroids, dim);
    for (let d = 0; d < n; d++) {
      next[d] = same[d] === d ? matrix.nearest(vectors.ids, vectors.weights, vectors.start[d], vectors.start[d + 1]) : next[same[d]];
    }
    const stable = next.every((v, i) => v === assign[i]);
    assign = next;
    const members: number[][] = centroids.map(() => []);
    assign.forEach((c, d) => {
      if (c >= 0) members[c].push(d);
    });
    centroids = members.map((m, c) => (m.length > 0 ? centroidOf(m, vectors, dim) : centroids[c]));
    if (stable) break;
  }

  const minSize = n >= 20 ? Math.max(2, Math.ceil(n * 0.01)) : 1;
  const unclustered: number[] = [];
  let groupsOut: Group[] = [];
  const byCluster: number[][] = centroids.map(() => []);
  assign.forEach((c, d) => (c >= 0 ? byCluster[c].push(d) : unclustered.push(d)));
  byCluster.forEach((members, c) => {
    if (members.length < minSize) {
      unclustered.push(...members);
      return;
    }
    groupsOut.push({ members, centroid: centroids[c], keyTerms: distinctiveTerms(members, vectors, n), sources: [c] });
  });
  groupsOut = mergeNearDuplicates(groupsOut, (members, sources) => {
    const centroid = centroidOf(members, vectors, dim);
    return { members, centroid, keyTerms: distinctiveTerms(members, vectors, n), sources };
  });
  const label = (t: string): string => labels[vectors.vocabIndex.get(t) as number] ?? t;
  const sim = new Float64Array(n);
  const ranked = groupsOut.map(({ members, centroid, keyTerms, sources }) => {
    for (const d of members) sim[d] = cosine(vectors, d, centroid);
    members.sort((a, b) => sim[b] - sim[a] || a - b);
    return { cluster: { members, keyTerms, keyTermLabels: keyTerms.map(label) }, centroid, sources };
  });
  const base = { vocabTerms, labels, topTermsFrom: (df: ArrayLike<number>) => rankTopTerms(vocabTerms, labels, df) };
  if (ranked.length === 0) {
    // Nothing shared (tiny or very heterogeneous input): one general theme over everything.
    const all = Array.from({ length: n }, (_, i) => i);
    const keyTerms = distinctiveTerms(all, vectors, n);
    return {
      ...base,
      clusters: [{ members: all, keyTerms, keyTermLabels: keyTerms.map(label) }],
      unclustered: [],
      topTerms,
      place: (text) => ({ cluster: 0, sim: 0, terms: termIdsOf(text, lang, vectors).ids }),
    };
  }
  // sort is stable: equal sizes keep their order
  ranked.sort((a, b) => b.cluster.members.length - a.cluster.members.length);
  unclustered.sort((a, b) => a - b);
  // a k-means cluster → the theme it became (merged, or dropped as too small: -1)
  const themeOf = new Int32Array(centroids.length).fill(-1);
  ranked.forEach((r, t) => r.sources.forEach((c) => (themeOf[c] = t)));
  const themeCentroids = ranked.map((r) => r.centroid);
  const placing = new CentroidMatrix(centroids, dim);
  return {
    ...base,
    clusters: ranked.map((r) => r.cluster),
    unclustered,
    topTerms,
    place(text) {
      const v = termIdsOf(text, lang, vectors);
      const c = placing.nearest(v.ids, v.weights, 0, v.ids.length);
      const t = c >= 0 ? themeOf[c] : -1;
      return t < 0 ? { ...NO_THEME, terms: v.ids } : { cluster: t, sim: sparseDot(v.ids, v.weights, 0, v.ids.length, themeCentroids[t]), terms: v.ids };
    },
  };
}

/** Every `step`-th element, from the first. */
function strided(all: Int32Array, step: number): Int32Array {
  const out = new Int32Array(Math.ceil(all.length / step));
  for (let j = 0, o = 0; j < all.length; j += step) out[o++] = all[j];
  return out;
}

/** For each row, the first row whose vector (ids and weights, entry by entry) is the same: itself when none is. */
function firstOfSameVector(v: TermVectors): Int32Array {
  const { ids, weights, start, n } = v;
  const first = new Int32Array(n);
  /** hash of a row's ids → the first row of each distinct vector with that hash, chained by `chain` */
  const heads = new Map<number, number>();
  const chain = new Int32Array(n).fill(-1);
  const equal = (a: number, b: number): boolean => {
    const len = start[a + 1] - start[a];
    if (start[b + 1] - start[b] !== len) return false;
    for (let e = 0; e < len; e++) if (ids[start[a] + e] !== ids[start[b] + e] || weights[start[a] + e] !== weights[start[b] + e]) return false;
    return true;
  };
  for (let d = 0; d < n; d++) {
    let h = 0x811c9dc5;
    for (let e = start[d]; e < start[d + 1]; e++) h = Math.imul(h ^ ids[e], 0x01000193);
    first[d] = d;
    const head = heads.get(h);
    if (head === undefined) {
      heads.set(h, d);
      continue;
    }
    let r = head;
    let last = head;
    for (; r >= 0; r = chain[r]) {
      if (equal(r, d)) break;
      last = r;
    }
    if (r >= 0) first[d] = r;
    else chain[last] = d;
  }
  return first;
}

/**
 * The centroids laid out term by term (the k weights of one term side by side), so one pass over a
 * row's entries scores it against every centroid: each sum adds the same products in the same
 * order as a dot product with each centroid would, so the scores are the same to the bit.
 */
class CentroidMatrix {
  private readonly byTerm: Float64Array;
  private readonly sums: Float64Array;
  readonly k: number;

  constructor(centroids: Float64Array[], dim: number) {
    const k = (this.k = centroids.length);
    this.byTerm = new Float64Array(dim * k);
    this.sums = new Float64Array(k);
    for (let c = 0; c < k; c++) {
      const cen = centroids[c];
      for (let t = 0; t < dim; t++) this.byTerm[t * k + c] = cen[t];
    }
  }

  /** The centroid most like a sparse vector (entries [from, to); cosine above 0.05), or -1. */
  nearest(ids: ArrayLike<number>, weights: ArrayLike<number>, from: number, to: number): number {
    const { k, byTerm, sums } = this;
    sums.fill(0);
    for (let e = from; e < to; e++) {
      const w = weights[e];
      const at = ids[e] * k;
      for (let c = 0; c < k; c++) sums[c] += w * byTerm[at + c];
    }
    let best = -1;
    let bestSim = 0.05;
    for (let c = 0; c < k; c++) {
      if (sums[c] > bestSim) {
        best = c;
        bestSim = sums[c];
      }
    }
    return best;
  }
}

/** One text's unit TF-IDF vector over a fitted vocabulary (entries in the order its terms first appear). */
function termIdsOf(text: string, lang: string, v: TermVectors): { ids: number[]; weights: number[] } {
  const ids: number[] = [];
  const counts: number[] = [];
  for (const term of termsOf(text, lang).terms) {
    const id = v.vocabIndex.get(term);
    // a filler term (df 0 once dropped) places nothing
    if (id === undefined || v.df[id] === 0) continue;
    const at = ids.indexOf(id);
    if (at >= 0) counts[at]++;
    else {
      ids.push(id);
      counts.push(1);
    }
  }
  let norm = 0;
  const weights = ids.map((id, e) => {
    const w = (1 + Math.log(counts[e])) * v.idf[id];
    norm += w * w;
    return w;
  });
  norm = Math.sqrt(norm);
  return { ids, weights: norm === 0 ? weights : weights.map((w) => w / norm) };
}

interface Group {
  members: number[];
  centroid: Float64Array;
  keyTerms: string[];
  /** the k-means clusters it was made of */
  sources: number[];
}

/** Cosine of two unit centroids. */
function centroidCosine(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Words of a theme's leading terms ("calendar sync" → calendar, sync). */
function leadWords(keyTerms: string[], k: number): Set<string> {
  return new Set(keyTerms.slice(0, k).flatMap((t) => t.split(' ')));
}

/** Two themes sharing a centroid this alike and a leading word are one problem said two ways. */
export const MERGE_MIN_COSINE = 0.2;

/**
 * Near-duplicate themes become one: a pair whose leading term shares a word with the other's two
 * leading terms ("calendar sync" / "outlook sync", 同步 / 同步失败) and whose centroids overlap.
 * The smaller joins the larger; the merged theme's terms are recomputed.
 */
function mergeNearDuplicates(groups: Group[], rebuild: (members: number[], sources: number[]) => Group): Group[] {
  let out = [...groups].sort((a, b) => b.members.length - a.members.length);
  for (let changed = true; changed; ) {
    changed = false;
    search: for (let i = 0; i < out.length; i++) {
      for (let j = i + 1; j < out.length; j++) {
        const a = out[i];
        const b = out[j];
        const shared =
          [...leadWords(a.keyTerms, 1)].some((w) => leadWords(b.keyTerms, 2).has(w)) ||
          [...leadWords(b.keyTerms, 1)].some((w) => leadWords(a.keyTerms, 2).has(w));
        if (!shared || centroidCosine(a.centroid, b.centroid) < MERGE_MIN_COSINE) continue;
        const merged = rebuild([...a.members, ...b.members], [...a.sources, ...b.sources]);
        out = [...out.slice(0, i), merged, ...out.slice(i + 1, j), ...out.slice(j + 1)].sort((x, y) => y.members.length - x.members.length);
        changed = true;
        break search;
      }
    }
  }
  return out;
}

function centroidOf(members: ArrayLike<number> & Iterable<number>, v: TermVectors, dim: number): Float64Array {
  const c = new Float64Array(dim);
  for (const d of members) for (let e = v.start[d]; e < v.start[d + 1]; e++) c[v.ids[e]] += v.weights[e];
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += c[i] * c[i];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dim; i++) c[i] /= norm;
  return c;
}

/** Terms most over-represented in the cluster (p_c · ln(p_c / p)), bigrams absorbing their words. */
export function distinctiveTerms(members: number[], vectors: TermVectors, n: number): string[] {
  const { df, vocabTerms, ids, start } = vectors;
  // rows of the cluster carrying each term (a row carries a term once)
  const inCluster = new Int32Array(vocabTerms.length);
  for (const d of members) for (let e = start[d]; e < start[d + 1]; e++) inCluster[ids[e]]++;
  const size = members.length;
  const scored: Array<{ term: string; score: number; dc: number }> = [];
  const inCount = new Map<string, number>();
  inCluster.forEach((dc, id) => {
    if (dc === 0 || (size >= 3 && dc < 2)) return;
    const pc = dc / size;
    const p = df[id] / n;
    const score = pc * Math.log(pc / p);
    if (score > 0 || size === n) {
      scored.push({ term: vocabTerms[id], score: size === n ? pc : score, dc });
      inCount.set(vocabTerms[id], dc);
    }
  });
  scored.sort((a, b) => b.score - a.score || a.term.localeCompare(b.term));
  const chosen: string[] = [];
  for (const { term } of scored) {
    if (chosen.length >= 5) break;
    const words = term.split(' ');
    if (chosen.some((c) => c === term || (words.length === 1 && c.split(' ').includes(term)))) continue;
    if (words.length === 2) {
      // a bigram replaces its already chosen words ("calendar sync" for "calendar"), in the first one's place
      const replaced = chosen.map((c, i) => [c, i] as const).filter(([c]) => words.includes(c));
      if (replaced.length > 0) {
        const at = replaced[0][1];
        for (let i = replaced.length - 1; i >= 0; i--) chosen.splice(replaced[i][1], 1);
        chosen.splice(at, 0, term);
        continue;
      }
    }
    chosen.push(term);
  }
  return chosen;
}
