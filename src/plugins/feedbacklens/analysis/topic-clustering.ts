/**
 * Themes as topics: groups of terms that occur in the same rows, then rows placed by their terms.
 *
 * 1. Vocabulary: unigram and bigram stems of each row read in its own language (feedback-terms.ts),
 *    without the product's name and its parts, without filler (words whose rows talk about the same
 *    mix as the others, filler-terms.ts), and without terms carried by most rows.
 * 2. Term groups: a topic's words keep company with its core word ("duplicate", "conflict",
 *    "offline" all come with "sync"), so a term whose rows lie mostly inside a group's rows joins
 *    that group, a term whose rows lie outside every group starts one, and a term split between
 *    groups (the product's own "notes", "update") belongs to none. Terms are taken by how much of
 *    their partners' rows they cover (core words first), not by frequency alone, so a word spread
 *    over every topic cannot found a theme before the topics do.
 * 3. Rows: each row goes to the group whose terms weigh most in it; a few rounds then re-weigh each
 *    term by the share of its rows in each group (so rarer words of a topic count too).
 * 4. Fragments: a group most of whose rows carry another group's core words is part of it, and is
 *    merged; a group without a core word whose rows fall into two sides that never share a word
 *    ("the new price" / "the new design") is split. Groups below 1% of the rows are too small to be a theme; their rows, and rows with no
 *    group term, are the rows no theme explains, and are counted as such.
 *
 * Deterministic: ties go to the term or group that sorts first.
 */
import { contentTokens } from '../../shared/tokenize.js';
import { isConceptTerm } from './feedback-concepts.js';
import { feedbackTerms } from './feedback-terms.js';
import { fillerTerms, withoutTerms } from './filler-terms.js';
import { postingsOf, type TermCorpus, type TermVectors } from './term-corpus.js';
import { distinctiveTerms } from './distinctive-terms.js';
import type { Placement, ThemeCluster, ThemeModel } from './theme-model.js';

export interface TopicOptions {
  /** words that name the subject itself (the product's name): part of every topic, no topic's word */
  ignoreWords?: string[];
}

/** A term joins the group holding this share of its rows, if no other group holds half as many. */
export const JOIN_COVER = 0.5;
/** A term whose rows lie this far inside a group widens the group's rows to its own. */
export const ANCHOR_COVER = 0.8;
/** A term with less than this share of its rows in any group may start a group of its own. */
export const SEED_MAX_COVER = 0.5;
/** A group whose rows carry another's core words this often is a fragment of it. */
export const FRAGMENT_SHARE = 0.6;
/** A term this strong in a group (most of its rows there) is one of the group's core words. */
export const CORE_STRENGTH = 0.6;
/** A group this many of whose rows carry other groups' core words (none of them most) is no topic. */
export const SPREAD_SHARE = 0.6;
const ROUNDS = 3;
const MAX_CANDIDATES = 400;

/** Stems of the product's name, its words and the parts of a joined name ("NoteNest" → note, nest). */
function productStems(words: string[], lang: string): Set<string> {
  const parts = words.flatMap((w) => [w, ...w.split(/(?<=\p{Ll})(?=\p{Lu})/u)]);
  return new Set(parts.flatMap((w) => contentTokens(w, lang).map((t) => t.stem)));
}

interface Group {
  /** candidate ids (index into `cand`) of the terms that founded or joined it */
  terms: number[];
  /** rows of its anchor terms, and how many */
  rows: Uint8Array;
  size: number;
}

function widen(g: Group, rows: Int32Array): void {
  for (const d of rows) {
    g.size += 1 - g.rows[d];
    g.rows[d] = 1;
  }
}

/** Fits topic themes on the corpus; the corpus is spent afterwards. */
export function fitTopics(corpus: TermCorpus, opts: TopicOptions = {}): ThemeModel {
  const n = corpus.size;
  const latin = corpus.latin;
  const ignore = productStems(opts.ignoreWords ?? [], latin);
  const minDf = n < 20 ? 1 : Math.max(2, Math.floor(n * 0.004));
  const all = corpus.vectorise(minDf, n < 10 ? n : Math.ceil(n * 0.7), ignore);
  const v = withoutTerms(all, fillerTerms(all).drop);
  const dim = v.vocabTerms.length;

  // candidates: terms frequent enough to carry a topic, not so frequent that they carry every topic
  const minTopicRows = n < 40 ? 2 : Math.max(3, Math.ceil(n * 0.015));
  const cand = Array.from({ length: dim }, (_, id) => id)
    .filter((id) => v.df[id] >= minTopicRows && v.df[id] <= Math.max(2, n * 0.6))
    .sort((a, b) => v.df[b] - v.df[a] || v.vocabTerms[a].localeCompare(v.vocabTerms[b]))
    .slice(0, MAX_CANDIDATES);
  const m = cand.length;
  const candOf = new Int32Array(dim).fill(-1);
  cand.forEach((id, i) => (candOf[id] = i));
  const postings = postingsOf(v, cand);
  const post = cand.map((id) => postings.get(id) as Int32Array);
  const dfc = post.map((p) => p.length);

  // co-occurrence among candidates
  const co = new Int32Array(m * m);
  const inRow: number[] = [];
  for (let d = 0; d < n; d++) {
    inRow.length = 0;
    for (let e = v.start[d]; e < v.start[d + 1]; e++) {
      const c = candOf[v.ids[e]];
      if (c >= 0) inRow.push(c);
    }
    for (let a = 0; a < inRow.length; a++)
      for (let b = a + 1; b < inRow.length; b++) {
        co[inRow[a] * m + inRow[b]]++;
        co[inRow[b] * m + inRow[a]]++;
      }
  }
  // How much of its partners' rows a term covers: a core word covers its topic's words. A partner
  // that comes with the term nearly always is the rest of its phrase ("affects my work"), not a
  // topic word it covers, and counts that much less.
  const dominance = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    let num = 0;
    let den = 0;
    for (let j = 0; j < m; j++) {
      const c = co[i * m + j];
      if (c === 0) continue;
      const w = c * (1 - c / dfc[i]);
      num += (w * c) / dfc[j];
      den += w;
    }
    dominance[i] = den > 0 ? num / den : 1;
  }
  const order = Array.from({ length: m }, (_, i) => i).sort(
    (a, b) => dfc[b] * dominance[b] - dfc[a] * dominance[a] || v.vocabTerms[cand[a]].localeCompare(v.vocabTerms[cand[b]]),
  );

  let groups: Group[] = [];
  for (const i of order) {
    let best = -1;
    let bestCover = 0;
    let second = 0;
    groups.forEach((g, k) => {
      let inside = 0;
      for (const d of post[i]) inside += g.rows[d];
      // beyond what the group's size explains: a group of most rows holds most of any word's rows
      const base = g.size / n;
      const cover = Math.max(0, (inside / dfc[i] - base) / (1 - base));
      if (cover > bestCover) {
        second = bestCover;
        [best, bestCover] = [k, cover];
      } else if (cover > second) second = cover;
    });
    if (best >= 0 && bestCover >= JOIN_COVER && bestCover >= 2 * second) {
      groups[best].terms.push(i);
      if (bestCover >= ANCHOR_COVER) widen(groups[best], post[i]);
    } else if (bestCover < SEED_MAX_COVER) {
      const g: Group = { terms: [i], rows: new Uint8Array(n), size: 0 };
      widen(g, post[i]);
      groups.push(g);
    }
  }

  // rows to groups, re-weighing terms by where their rows went
  let assign = new Int32Array(n).fill(-1);
  let strength = initialStrengths(groups, dim, cand);
  const minSize = n >= 20 ? Math.max(2, Math.ceil(n * 0.01)) : 1;
  for (let round = 0; round < ROUNDS + 2; round++) {
    const before = assign;
    assign = assignRows(v, strength, groups.length) as typeof assign;
    // settled: the same rows in the same groups as the round before, after the last merge
    if (round > ROUNDS && assign.every((g, d) => g === before[d])) break;
    strength = strengthsFrom(v, assign, groups.length);
    if (round <= 1) {
      // two topics joined by a word they share ("the new price", "the new design") part again
      const parts = splitMixed(v, assign, groups.length, minSize);
      if (parts > 0) {
        for (let p = 0; p < parts; p++) groups.push({ terms: [], rows: new Uint8Array(0), size: 0 });
        strength = strengthsFrom(v, assign, groups.length);
      }
    }
    if (round >= 1 && round <= ROUNDS) {
      // fragments join the group whose core words most of their rows carry; tiny groups dissolve
      const merged = mergeFragments(v, assign, strength, groups.length, minSize);
      if (merged.count !== groups.length) {
        groups = merged.keep.map(() => ({ terms: [], rows: new Uint8Array(0), size: 0 }));
        for (let d = 0; d < n; d++) assign[d] = assign[d] >= 0 ? merged.into[assign[d]] : -1;
        strength = strengthsFrom(v, assign, merged.count);
      }
    }
  }

  // themes, largest first
  const k = groups.length;
  const members: number[][] = Array.from({ length: k }, () => []);
  const unclustered: number[] = [];
  const score = rowScores(v, strength, k);
  for (let d = 0; d < n; d++) (assign[d] >= 0 ? members[assign[d]] : unclustered).push(d);
  const kept = members
    .map((rows, g) => ({ rows, g }))
    .filter((x) => x.rows.length >= minSize)
    .sort((a, b) => b.rows.length - a.rows.length || a.g - b.g);
  for (const x of members.map((rows, g) => ({ rows, g })).filter((x) => x.rows.length > 0 && x.rows.length < minSize)) unclustered.push(...x.rows);
  unclustered.sort((a, b) => a - b);
  if (kept.length === 0 && n > 0) {
    // nothing shared (a handful of rows, or every row about something else): one general theme
    const rows = Array.from({ length: n }, (_, d) => d);
    const keyTerms = distinctiveTerms(rows, v, n).filter((t) => !t.split(' ').some(isConceptTerm));
    const label = (t: string): string => v.labels[v.vocabIndex.get(t) as number] ?? t;
    return {
      vocabTerms: v.vocabTerms,
      labels: v.labels,
      clusters: [{ members: rows, keyTerms, keyTermLabels: keyTerms.map(label) }],
      unclustered: [],
      topTerms: rankTopTerms(v),
      topTermsFrom: (df) => rankTopTerms({ ...v, df: Int32Array.from(df as ArrayLike<number>) }),
      place: (text) => ({ cluster: 0, sim: 0, terms: vectorOf(text, latin, v).ids }),
    };
  }
  const themeOfGroup = new Int32Array(k).fill(-1);
  kept.forEach((x, t) => (themeOfGroup[x.g] = t));
  const label = (t: string): string => v.labels[v.vocabIndex.get(t) as number] ?? t;
  const clusters: ThemeCluster[] = kept.map(({ rows, g }) => {
    // most central first: the rows where the group's terms weigh most (ties: earlier rows)
    rows.sort((a, b) => score(b, g) - score(a, g) || a - b);
    const keyTerms = distinctiveTerms(rows, v, n).filter((t) => !t.split(' ').some(isConceptTerm));
    return { members: rows, keyTerms, keyTermLabels: keyTerms.map(label) };
  });
  const topTerms = rankTopTerms(v);
  const finalStrength = strength;
  return {
    vocabTerms: v.vocabTerms,
    labels: v.labels,
    clusters,
    unclustered,
    topTerms,
    topTermsFrom: (df) => rankTopTerms({ ...v, df: Int32Array.from(df as ArrayLike<number>) }),
    place(text): Placement {
      const { ids, weights } = vectorOf(text, latin, v);
      let best = -1;
      let bestScore = 0;
      for (let g = 0; g < k; g++) {
        let s = 0;
        for (let e = 0; e < ids.length; e++) s += weights[e] * finalStrength[ids[e] * k + g];
        if (s > bestScore) [best, bestScore] = [g, s];
      }
      const t = best >= 0 ? themeOfGroup[best] : -1;
      return t < 0 ? { cluster: -1, sim: 0, terms: ids } : { cluster: t, sim: bestScore, terms: ids };
    },
  };
}

/** Founding strengths: each group's terms weigh 1 in it. Layout: term id × groups. */
function initialStrengths(groups: Group[], dim: number, cand: number[]): Float64Array {
  const k = groups.length;
  const s = new Float64Array(dim * k);
  groups.forEach((g, j) => {
    for (const i of g.terms) s[cand[i] * k + j] = 1;
  });
  return s;
}

/** Each row to the group its terms weigh most in (-1: none of its terms belongs to a group). */
function assignRows(v: TermVectors, strength: Float64Array, k: number): Int32Array {
  const out = new Int32Array(v.n).fill(-1);
  const sums = new Float64Array(k);
  for (let d = 0; d < v.n; d++) {
    sums.fill(0);
    for (let e = v.start[d]; e < v.start[d + 1]; e++) {
      const at = v.ids[e] * k;
      const w = v.weights[e];
      for (let g = 0; g < k; g++) sums[g] += w * strength[at + g];
    }
    let best = -1;
    let bestScore = 0;
    for (let g = 0; g < k; g++) if (sums[g] > bestScore + 1e-12) [best, bestScore] = [g, sums[g]];
    out[d] = best;
  }
  return out;
}

/** The score of row d in group g. */
function rowScores(v: TermVectors, strength: Float64Array, k: number): (d: number, g: number) => number {
  return (d, g) => {
    let s = 0;
    for (let e = v.start[d]; e < v.start[d + 1]; e++) s += v.weights[e] * strength[v.ids[e] * k + g];
    return s;
  };
}

/**
 * A term's strength in a group: the share of its rows there, counted only when it is well above
 * the group's share of all rows (a term split between topics weighs in none), damped for terms
 * seen in very few rows.
 */
function strengthsFrom(v: TermVectors, assign: Int32Array, k: number): Float64Array {
  const dim = v.vocabTerms.length;
  const inGroup = new Int32Array(dim * k);
  const total = new Int32Array(dim);
  for (let d = 0; d < v.n; d++) {
    const g = assign[d];
    for (let e = v.start[d]; e < v.start[d + 1]; e++) {
      total[v.ids[e]]++;
      if (g >= 0) inGroup[v.ids[e] * k + g]++;
    }
  }
  // a term belongs to a group when its rows lie there beyond what the group's size explains:
  // halfway from the group's share of all rows to every row
  const size = new Int32Array(k);
  for (const g of assign) if (g >= 0) size[g]++;
  const needed = Array.from(size, (z) => Math.max(0.5, (1 + z / v.n) / 2));
  const s = new Float64Array(dim * k);
  for (let t = 0; t < dim; t++) {
    if (total[t] < 2) continue;
    for (let g = 0; g < k; g++) {
      const share = inGroup[t * k + g] / total[t];
      if (share >= needed[g]) s[t * k + g] = share * (total[t] / (total[t] + 1));
    }
  }
  return s;
}

/** A group with no word in this share of its rows has no core a topic would have. */
export const CORE_ROWS = 0.75;
/** Two words each in this share of a group's rows, (nearly) never together, are two topics. */
export const SIDE_ROWS = 0.3;

/**
 * Groups without a core word whose rows fall in two sides, each carried by a word of its own that
 * (nearly) never meets the other's, are split: the rows with the second word (and not the first)
 * become a new group, numbered after the others. Returns how many groups were added.
 */
function splitMixed(v: TermVectors, assign: Int32Array, k: number, minSize: number): number {
  const rowsOf: number[][] = Array.from({ length: k }, () => []);
  for (let d = 0; d < v.n; d++) if (assign[d] >= 0) rowsOf[assign[d]].push(d);
  let added = 0;
  for (let g = 0; g < k; g++) {
    const rows = rowsOf[g];
    if (rows.length < Math.max(2 * minSize, 6)) continue;
    const count = new Map<number, number>();
    for (const d of rows) for (let e = v.start[d]; e < v.start[d + 1]; e++) count.set(v.ids[e], (count.get(v.ids[e]) ?? 0) + 1);
    const top = [...count].filter(([, c]) => c >= SIDE_ROWS * rows.length).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    if (top.length < 2 || top[0][1] >= CORE_ROWS * rows.length) continue;
    const carries = (d: number, id: number): boolean => {
      for (let e = v.start[d]; e < v.start[d + 1]; e++) if (v.ids[e] === id) return true;
      return false;
    };
    let best: [number, number] | null = null;
    let bestMin = 0;
    for (let i = 0; i < top.length; i++)
      for (let j = i + 1; j < top.length; j++) {
        const [a, ca] = top[i];
        const [b, cb] = top[j];
        let both = 0;
        for (const d of rows) if (carries(d, a) && carries(d, b)) both++;
        const m = Math.min(ca, cb);
        if (both <= 0.1 * m && m > bestMin) [best, bestMin] = [[a, b], m];
      }
    if (!best) continue;
    const [a, b] = best;
    const to = k + added++;
    for (const d of rows) if (carries(d, b) && !carries(d, a)) assign[d] = to;
  }
  return added;
}

/**
 * Groups whose rows mostly carry a larger group's core words (strength ≥ CORE_STRENGTH there) join it; groups
 * below `minSize` rows dissolve (their rows are placed again). Returns where each group went.
 */
function mergeFragments(
  v: TermVectors,
  assign: Int32Array,
  strength: Float64Array,
  k: number,
  minSize: number,
): { into: Int32Array; keep: number[]; count: number } {
  const size = new Int32Array(k);
  for (const g of assign) if (g >= 0) size[g]++;
  const byDesc = Array.from({ length: k }, (_, g) => g).sort((a, b) => size[b] - size[a] || a - b);
  const parent = Int32Array.from({ length: k }, (_, g) => g);
  const root = (g: number): number => (parent[g] === g ? g : (parent[g] = root(parent[g])));
  // carries[g * k + h]: rows of g carrying a core word of h; carriesAny[g]: of any other group
  const carries = new Int32Array(k * k);
  const carriesAny = new Int32Array(k);
  const seen = new Uint8Array(k);
  for (let d = 0; d < v.n; d++) {
    const g = assign[d];
    if (g < 0) continue;
    seen.fill(0);
    let any = 0;
    for (let e = v.start[d]; e < v.start[d + 1]; e++) {
      const at = v.ids[e] * k;
      for (let h = 0; h < k; h++)
        if (h !== g && !seen[h] && strength[at + h] >= CORE_STRENGTH) {
          seen[h] = 1;
          any = 1;
        }
    }
    carriesAny[g] += any;
    for (let h = 0; h < k; h++) if (seen[h]) carries[g * k + h]++;
  }
  // A group whose rows mostly carry other groups' core words, spread over several of them, is
  // words said whatever the topic (filler the spread test missed): it dissolves.
  const spread = new Uint8Array(k);
  for (let g = 0; g < k; g++) {
    if (size[g] === 0) continue;
    let most = 0;
    for (let h = 0; h < k; h++) if (h !== g) most = Math.max(most, carries[g * k + h]);
    if (carriesAny[g] >= SPREAD_SHARE * size[g] && most < 0.7 * carriesAny[g]) spread[g] = 1;
  }
  for (const g of byDesc.slice().reverse()) {
    if (size[g] === 0 || spread[g]) continue;
    let best = -1;
    let bestShare = 0;
    for (const h of byDesc) {
      if (h === g || spread[h] || size[h] < size[g]) continue;
      const share = carries[g * k + h] / size[g];
      if (share > bestShare) [best, bestShare] = [h, share];
    }
    if (best >= 0 && bestShare >= FRAGMENT_SHARE) parent[g] = root(best);
  }
  const keep: number[] = [];
  const into = new Int32Array(k).fill(-1);
  const newId = new Map<number, number>();
  for (const g of byDesc) {
    if (spread[g]) continue;
    const r = root(g);
    let total = 0;
    for (let h = 0; h < k; h++) if (root(h) === r) total += size[h];
    if (total < minSize && total > 0) continue;
    if (!newId.has(r)) {
      newId.set(r, keep.length);
      keep.push(r);
    }
  }
  for (let g = 0; g < k; g++) into[g] = spread[g] ? -1 : (newId.get(root(g)) ?? -1);
  return { into, keep, count: keep.length };
}

function rankTopTerms(v: Pick<TermVectors, 'vocabTerms' | 'labels' | 'df'>): Array<{ term: string; rows: number }> {
  return v.vocabTerms
    .map((term, id) => ({ term, label: v.labels[id], rows: v.df[id] }))
    .filter((t) => t.rows > 0 && !isConceptTerm(t.term))
    .sort((a, b) => b.rows - a.rows || a.label.localeCompare(b.label))
    .slice(0, 15)
    .map(({ label, rows }) => ({ term: label, rows }));
}

/** One text's unit TF-IDF vector over the fitted vocabulary. */
function vectorOf(text: string, latin: string, v: TermVectors): { ids: number[]; weights: number[] } {
  const ids: number[] = [];
  const counts: number[] = [];
  for (const term of feedbackTerms(text, latin).terms) {
    const id = v.vocabIndex.get(term);
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
