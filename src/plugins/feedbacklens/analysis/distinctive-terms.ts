/** The key terms of a set of rows: the terms most over-represented in them against the corpus. */
import type { TermVectors } from './term-corpus.js';

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
