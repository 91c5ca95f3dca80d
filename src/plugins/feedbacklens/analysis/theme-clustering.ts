/**
 * What a theme fit gives (clusters with their most central rows first, key terms and labels, the
 * rows no theme explains, and a model that places rows it was not fitted on), `clusterThemes` over
 * a list of texts, and the key terms of a set of rows. The fitting itself is topic-clustering.ts.
 */
import { TermCorpus, type TermVectors } from './term-corpus.js';
import { fitTopics } from './topic-clustering.js';

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
  /** how much the theme's words weigh in the row (0 when none): orders members, most central first */
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

export interface ClusterOptions {
  /** words that name the subject itself (e.g. the product name): true of every theme, so no theme's label */
  ignoreWords?: string[];
  /** corpus language (ISO 639-1): stop words and stemmer of its words */
  lang?: string;
}

/** Themes of a list of texts, by the analysis's own method (topic-clustering.ts). */
export function clusterThemes(texts: string[], opts: ClusterOptions = {}): ClusteringResult {
  const corpus = new TermCorpus(opts.lang ?? 'en');
  for (const t of texts) corpus.add(t);
  const { clusters, unclustered, topTerms } = fitTopics(corpus, { ignoreWords: opts.ignoreWords ?? [] });
  return { clusters, unclustered, topTerms };
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
