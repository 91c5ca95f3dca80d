/**
 * What a theme fit gives: clusters with their most central rows first, key terms and labels, the
 * rows no theme explains, and a model that places rows it was not fitted on.
 */
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
