/**
 * Themes by term clustering: TF-IDF vectors over unigram and bigram stems, seeds from greedy
 * grouping of salient co-occurring terms, then spherical k-means (cosine) to settle membership.
 * Nothing here knows any topic in advance; labels come from each cluster's most distinctive terms.
 */
import { contentTokens, termsOf } from '../../shared/tokenize.js';

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

type SparseVec = Map<number, number>;

/** Sparse document · dense centroid: no hash lookups in the k-means inner loop. */
function cosine(doc: SparseVec, centroid: Float64Array): number {
  let s = 0;
  for (const [k, v] of doc) s += v * centroid[k];
  return s;
}

function normalise(v: SparseVec): SparseVec {
  let n = 0;
  for (const x of v.values()) n += x * x;
  n = Math.sqrt(n);
  if (n === 0) return v;
  for (const [k, x] of v) v.set(k, x / n);
  return v;
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

export function clusterThemes(texts: string[], opts: ClusterOptions = {}): ClusteringResult {
  const n = texts.length;
  const lang = opts.lang ?? 'en';
  const ignore = new Set((opts.ignoreWords ?? []).flatMap((w) => contentTokens(w, lang).map((t) => t.stem)));
  const docTerms: Array<Map<string, number>> = [];
  const surfaceCounts = new Map<string, Map<string, number>>();
  const df = new Map<string, number>();
  for (const t of texts) {
    const { terms, surfaces } = termsOf(t, lang);
    const tf = new Map<string, number>();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
    for (const [key, surface] of surfaces) {
      let m = surfaceCounts.get(key);
      if (!m) surfaceCounts.set(key, (m = new Map()));
      m.set(surface, (m.get(surface) ?? 0) + 1);
    }
    docTerms.push(tf);
  }
  const label = (key: string): string => {
    const m = surfaceCounts.get(key);
    if (!m) return key;
    let best = key;
    let bestCount = -1;
    for (const [s, c] of m) if (c > bestCount || (c === bestCount && s < best)) [best, bestCount] = [s, c];
    return best;
  };

  // Vocabulary: terms frequent enough to define a theme, but not so common they say nothing.
  const minDf = n < 20 ? 1 : Math.max(2, Math.floor(n * 0.004));
  const maxDf = n < 10 ? n : Math.ceil(n * 0.7);
  const vocab = new Map<string, number>();
  const idf: number[] = [];
  const vocabTerms: string[] = [];
  for (const [term, d] of df) {
    if (d < minDf || d > maxDf || term.split(' ').some((w) => ignore.has(w))) continue;
    vocab.set(term, vocabTerms.length);
    vocabTerms.push(term);
    idf.push(Math.log((1 + n) / (1 + d)) + 1);
  }
  const vectors: SparseVec[] = docTerms.map((tf) => {
    const v: SparseVec = new Map();
    for (const [term, c] of tf) {
      const id = vocab.get(term);
      if (id !== undefined) v.set(id, (1 + Math.log(c)) * idf[id]);
    }
    return normalise(v);
  });
  const postings: number[][] = vocabTerms.map(() => []);
  vectors.forEach((v, d) => {
    for (const id of v.keys()) postings[id].push(d);
  });

  const topTerms = vocabTerms
    .map((t, id) => ({ term: label(t), rows: postings[id].length }))
    .sort((a, b) => b.rows - a.rows || a.term.localeCompare(b.term))
    .slice(0, 15);

  // Seeds: walk terms by salience (df × idf × coherence²); coherence, how alike the rows carrying
  // a term are, keeps broad words ("task" in a task app) from seeding a catch-all theme.
  const k = Math.min(opts.maxThemes ?? 8, targetThemeCount(n));
  const seedPool = vocabTerms
    .map((_, id) => id)
    .filter((id) => postings[id].length >= Math.min(2, n) && (n < 20 || postings[id].length <= n * (n >= 100 ? 0.25 : 0.6)))
    .sort((a, b) => postings[b].length * idf[b] - postings[a].length * idf[a] || vocabTerms[a].localeCompare(vocabTerms[b]))
    .slice(0, 80);
  const salience = new Map<number, number>();
  for (const id of seedPool) {
    // a deterministic sample is enough to measure how alike a term's rows are
    const all = postings[id];
    const step = Math.max(1, Math.floor(all.length / 300));
    const docs = step === 1 ? all : all.filter((_, j) => j % step === 0);
    const c = centroidOf(docs, vectors, vocabTerms.length);
    let coh = 0;
    for (const d of docs) coh += cosine(vectors[d], c);
    coh /= docs.length;
    salience.set(id, all.length * idf[id] * coh * coh);
  }
  const order = [...seedPool].sort((a, b) => (salience.get(b) ?? 0) - (salience.get(a) ?? 0) || vocabTerms[a].localeCompare(vocabTerms[b]));
  // Overlap is measured against each group's seed term only, so groups do not snowball.
  const groups: Array<{ seed: Set<number>; docs: Set<number> }> = [];
  for (const id of order) {
    const docs = postings[id];
    let joined = false;
    for (const g of groups) {
      let inter = 0;
      for (const d of docs) if (g.seed.has(d)) inter++;
      if (inter / Math.min(docs.length, g.seed.size) >= 0.5) {
        for (const d of docs) g.docs.add(d);
        joined = true;
        break;
      }
    }
    if (!joined && groups.length < k) groups.push({ seed: new Set(docs), docs: new Set(docs) });
  }

  let centroids: Float64Array[] = groups.map((g) => centroidOf([...g.docs], vectors, vocabTerms.length));
  let assign = new Int32Array(n).fill(-1);
  for (let iter = 0; iter < 12 && centroids.length > 0; iter++) {
    const next = new Int32Array(n).fill(-1);
    for (let d = 0; d < n; d++) {
      let best = -1;
      let bestSim = 0.05;
      for (let c = 0; c < centroids.length; c++) {
        const s = cosine(vectors[d], centroids[c]);
        if (s > bestSim) [best, bestSim] = [c, s];
      }
      next[d] = best;
    }
    const stable = next.every((v, i) => v === assign[i]);
    assign = next;
    const members: number[][] = centroids.map(() => []);
    assign.forEach((c, d) => {
      if (c >= 0) members[c].push(d);
    });
    centroids = members.map((m, c) => (m.length > 0 ? centroidOf(m, vectors, vocabTerms.length) : centroids[c]));
    if (stable) break;
  }

  const minSize = n >= 20 ? Math.max(2, Math.ceil(n * 0.01)) : 1;
  const unclustered: number[] = [];
  let groupsOut: Array<{ members: number[]; centroid: Float64Array; keyTerms: string[] }> = [];
  const byCluster: number[][] = centroids.map(() => []);
  assign.forEach((c, d) => (c >= 0 ? byCluster[c].push(d) : unclustered.push(d)));
  byCluster.forEach((members, c) => {
    if (members.length < minSize) {
      unclustered.push(...members);
      return;
    }
    groupsOut.push({ members, centroid: centroids[c], keyTerms: distinctiveTerms(members, postings, vocabTerms, n) });
  });
  groupsOut = mergeNearDuplicates(groupsOut, (members) => {
    const centroid = centroidOf(members, vectors, vocabTerms.length);
    return { members, centroid, keyTerms: distinctiveTerms(members, postings, vocabTerms, n) };
  });
  const clusters: ThemeCluster[] = groupsOut.map(({ members, centroid, keyTerms }) => {
    const sim = new Map(members.map((d) => [d, cosine(vectors[d], centroid)]));
    members.sort((a, b) => (sim.get(b) as number) - (sim.get(a) as number) || a - b);
    return { members, keyTerms, keyTermLabels: keyTerms.map(label) };
  });
  if (clusters.length === 0) {
    // Nothing shared (tiny or very heterogeneous input): one general theme over everything.
    const all = texts.map((_, i) => i);
    const keyTerms = distinctiveTerms(all, postings, vocabTerms, n);
    return { clusters: [{ members: all, keyTerms, keyTermLabels: keyTerms.map(label) }], unclustered: [], topTerms };
  }
  clusters.sort((a, b) => b.members.length - a.members.length);
  unclustered.sort((a, b) => a - b);
  return { clusters, unclustered, topTerms };
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
function mergeNearDuplicates<G extends { members: number[]; centroid: Float64Array; keyTerms: string[] }>(groups: G[], rebuild: (members: number[]) => G): G[] {
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
        const merged = rebuild([...a.members, ...b.members]);
        out = [...out.slice(0, i), merged, ...out.slice(i + 1, j), ...out.slice(j + 1)].sort((x, y) => y.members.length - x.members.length);
        changed = true;
        break search;
      }
    }
  }
  return out;
}

function centroidOf(members: number[], vectors: SparseVec[], dim: number): Float64Array {
  const c = new Float64Array(dim);
  for (const d of members) for (const [k, v] of vectors[d]) c[k] += v;
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += c[i] * c[i];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dim; i++) c[i] /= norm;
  return c;
}

/** Terms most over-represented in the cluster (p_c · ln(p_c / p)), bigrams absorbing their words. */
function distinctiveTerms(members: number[], postings: number[][], vocabTerms: string[], n: number): string[] {
  const inCluster = new Set(members);
  const size = members.length;
  const scored: Array<{ term: string; score: number; dc: number }> = [];
  const inCount = new Map<string, number>();
  postings.forEach((docs, id) => {
    let dc = 0;
    for (const d of docs) if (inCluster.has(d)) dc++;
    if (dc === 0 || (size >= 3 && dc < 2)) return;
    const pc = dc / size;
    const p = docs.length / n;
    const score = pc * Math.log(pc / p);
    if (score > 0 || size === n) {
      scored.push({ term: vocabTerms[id], score: size === n ? pc : score, dc });
      inCount.set(vocabTerms[id], dc);
    }
  });
  scored.sort((a, b) => b.score - a.score || a.term.localeCompare(b.term));
  const chosen: string[] = [];
  for (const { term, dc } of scored) {
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
