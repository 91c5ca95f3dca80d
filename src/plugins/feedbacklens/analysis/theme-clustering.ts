/** `clusterThemes`: themes of a list of texts, by the analysis's own method (topic-clustering.ts). */
import { TermCorpus } from './term-corpus.js';
import type { ClusteringResult } from './theme-model.js';
import { fitTopics } from './topic-clustering.js';

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
