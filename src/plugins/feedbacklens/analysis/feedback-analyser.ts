/**
 * The feedback analysis in passes over the rows, holding a few numbers per row instead of the rows:
 *
 * - up to `THEME_FIT_ROWS` rows: one pass scores every row's sentiment and adds its terms to the
 *   corpus the themes are fitted on — exactly the whole-corpus analysis;
 * - above it, themes are fitted on a uniform random sample of that many rows (fixed seed), then a
 *   second pass scores every row and places it in its nearest theme, so every count (sentiment,
 *   mentions, ratings, top terms) still covers every row; only theme discovery is sampled.
 *
 * Callers feed the rows in file order: `fitRow` for the rows `fits(i)` names, `fit()`, then (when
 * `sampled`) `placeRow` for every row; `citedRows()` then says which rows' ids the result quotes,
 * and `finish` builds the statistics with those ids. Pure and deterministic.
 */
import type { CorpusLanguage } from '../../shared/text-language.js';
import type { FeedbackStats, ThemeSample, ThemeSummary } from './feedback-stats.js';
import type { FeedbackTally } from './feedback-tally.js';
import { sampleRows } from './row-sample.js';
import { normaliseRating, ratingScaleOfMax, scoreSentiment, sentimentSource } from './sentiment-score.js';
import { TermCorpus } from './term-corpus.js';
import type { ThemeModel } from './theme-model.js';
import { fitTopics } from './topic-clustering.js';
import { isWholeLabel, priorityOf, severityOf, themeTitle, type ThemeSentiment } from './theme-scoring.js';

/** Rows the themes are fitted on at most; larger inputs fit on a sample of this many. */
export const THEME_FIT_ROWS = 100_000;
/** The sample's seed: the same file always gives the same themes. */
export const THEME_SAMPLE_SEED = 14;

const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;
const LABELS = ['positive', 'neutral', 'negative'] as const;

interface ThemeDraft extends Omit<ThemeSummary, 'feedback_ids' | 'representative_ids'> {
  /** every row of the theme, most central first */
  memberRows: Int32Array;
  feedbackRows: number[];
  representativeRows: number[];
}

export interface AnalyserOptions {
  language: CorpusLanguage;
  productName?: string;
  /** rows the themes are fitted on at most (default THEME_FIT_ROWS) */
  fitRows?: number;
}

export class FeedbackAnalyser {
  readonly n: number;
  /** true when themes are fitted on a sample and every row is placed in a second pass */
  readonly sampled: boolean;
  private readonly lang: string;
  private readonly scale: { min: number; max: number } | null;
  private readonly sample: Uint8Array | null;
  private readonly label: Uint8Array;
  private readonly signal: Float64Array;
  private scoreSum = 0;
  private readonly counts = { positive: 0, neutral: 0, negative: 0 };
  private corpus: TermCorpus | null;
  private model: ThemeModel | null = null;
  // sampled: where each row went, and term document counts over every row
  private theme: Int8Array | null = null;
  private sim: Float64Array | null = null;
  private df: Int32Array | null = null;
  private drafts: ThemeDraft[] | null = null;

  constructor(
    private readonly tally: FeedbackTally,
    private readonly opts: AnalyserOptions,
  ) {
    this.n = tally.n;
    this.lang = opts.language.code;
    this.scale = ratingScaleOfMax(tally.maxRating);
    const fitRows = opts.fitRows ?? THEME_FIT_ROWS;
    this.sampled = this.n > fitRows;
    this.sample = this.sampled ? sampleRows(this.n, fitRows, THEME_SAMPLE_SEED) : null;
    this.label = new Uint8Array(this.n);
    this.signal = new Float64Array(this.n);
    this.corpus = new TermCorpus(this.lang, opts.language.latin);
  }

  /** Whether row i goes to `fitRow`. */
  fits(i: number): boolean {
    return this.sample === null || this.sample[i] === 1;
  }

  /** The theme sample, when there is one: for the artifacts' `source`. */
  get themeSample(): ThemeSample | null {
    return this.sampled ? { rows: this.opts.fitRows ?? THEME_FIT_ROWS, seed: THEME_SAMPLE_SEED, method: SAMPLE_METHOD } : null;
  }

  private score(i: number, text: string): void {
    const s = scoreSentiment(text, normaliseRating(this.tally.rating(i), this.scale), this.lang);
    this.counts[s.label]++;
    this.scoreSum += s.score;
    this.label[i] = LABELS.indexOf(s.label);
    this.signal[i] = s.signal;
  }

  fitRow(i: number, text: string): void {
    if (!this.corpus) throw new Error('fitRow after fit()');
    if (!this.sampled) this.score(i, text);
    this.corpus.add(text);
  }

  fit(): void {
    if (!this.corpus) throw new Error('fit() twice');
    this.model = fitTopics(this.corpus, { ignoreWords: this.opts.productName ? [this.opts.productName] : [] });
    this.corpus = null;
    if (this.sampled) {
      this.theme = new Int8Array(this.n).fill(-1);
      this.sim = new Float64Array(this.n);
      this.df = new Int32Array(this.model.vocabTerms.length);
    }
  }

  /** Sampled analyses only: every row, in order, after fit(). */
  placeRow(i: number, text: string): void {
    if (!this.model || !this.theme || !this.sim || !this.df) throw new Error('placeRow needs a sampled analysis after fit()');
    this.score(i, text);
    const p = this.model.place(text);
    this.theme[i] = p.cluster;
    this.sim[i] = p.sim;
    for (const id of p.terms) this.df[id]++;
  }

  /** Each theme's cluster and rows (most central first), largest theme first. */
  private themeMembers(model: ThemeModel): Array<{ cluster: number; rows: Int32Array }> {
    if (!this.sampled) return model.clusters.map((c, cluster) => ({ cluster, rows: Int32Array.from(c.members) }));
    const theme = this.theme as Int8Array;
    const sim = this.sim as Float64Array;
    const sizes = new Int32Array(model.clusters.length);
    for (let i = 0; i < this.n; i++) if (theme[i] >= 0) sizes[theme[i]]++;
    const out = Array.from(sizes, (s, cluster) => ({ cluster, rows: new Int32Array(s) }));
    const fill = new Int32Array(sizes.length);
    for (let i = 0; i < this.n; i++) if (theme[i] >= 0) out[theme[i]].rows[fill[theme[i]]++] = i;
    for (const { rows } of out) rows.sort((a, b) => sim[b] - sim[a] || a - b);
    // the order fitted clusters come in, by the sizes over every row (sort is stable)
    return out.sort((a, b) => b.rows.length - a.rows.length);
  }

  private buildDrafts(): ThemeDraft[] {
    const model = this.model;
    if (!model) throw new Error('fit() first');
    const themes = this.themeMembers(model);
    const largest = Math.max(...themes.map((m) => m.rows.length));
    const drafts: ThemeDraft[] = [];
    themes.forEach(({ cluster, rows: m }) => {
      const c = model.clusters[cluster];
      const size = m.length;
      if (size === 0) return;
      let pos = 0;
      let neg = 0;
      let intensity = 0;
      let rSum = 0;
      let rN = 0;
      let low = 0;
      for (const d of m) {
        if (this.label[d] === 0) pos++;
        if (this.label[d] === 2) neg++;
        intensity += Math.max(0, -this.signal[d]);
        const rating = this.tally.rating(d);
        const rn = normaliseRating(rating, this.scale);
        if (rn !== null) {
          rN++;
          rSum += rating as number;
          if (rn <= 0.4) low++;
        }
      }
      const negShare = neg / size;
      const posShare = pos / size;
      const lowShare = rN > 0 ? low / rN : null;
      const meanIntensity = intensity / size;
      const severityScore = lowShare === null ? 0.7 * negShare + 0.3 * meanIntensity : 0.5 * negShare + 0.3 * lowShare + 0.2 * meanIntensity;
      const priorityScore = (size / largest) * severityScore;
      const sentiment: ThemeSentiment =
        negShare >= 0.5 ? 'negative' : posShare >= 0.6 ? 'positive' : posShare >= 0.25 && negShare >= 0.25 ? 'mixed' : 'neutral';
      // Central rows first, then within the top central ones prefer the clearest voice of the theme
      // (a stable sort by signal of the central rows: problem themes quote their most negative).
      // A theme's quotes agree with it: praise quotes praise, a problem quotes complaints (a bug report
      // is never the voice of a positive theme); mixed and neutral themes keep their central rows.
      const central = Array.from(m.subarray(0, Math.max(5, Math.ceil(size * 0.3))));
      const want = sentiment === 'positive' ? 0 : sentiment === 'negative' ? 2 : -1;
      const agreeing = want < 0 ? [] : central.filter((d) => this.label[d] === want);
      const pool = agreeing.length > 0 ? agreeing : central;
      const reps = (
        sentiment === 'positive' ? pool.sort((a, b) => this.signal[b] - this.signal[a]) : pool.sort((a, b) => this.signal[a] - this.signal[b])
      ).slice(0, 5);
      drafts.push({
        theme_id: `T${drafts.length + 1}`,
        title: themeTitle(c.keyTermLabels, this.lang, c.keyTerms),
        // a label that cuts a word ("版太贵了") is shown to no one
        key_terms: c.keyTermLabels.filter(isWholeLabel),
        key_stems: c.keyTerms.filter((_, k) => isWholeLabel(c.keyTermLabels[k])),
        mention_count: size,
        share: round(size / this.n),
        sentiment,
        positive_share: round(posShare),
        negative_share: round(negShare),
        average_rating: rN > 0 ? round(rSum / rN, 2) : null,
        low_rating_share: lowShare === null ? null : round(lowShare),
        severity: severityOf(severityScore),
        severity_score: round(severityScore),
        priority_score: round(priorityScore),
        // praise is kept, not fixed: it never outranks a problem
        priority: sentiment === 'positive' ? 'P3' : priorityOf(priorityScore),
        memberRows: m,
        feedbackRows: Array.from(m.subarray(0, 20)),
        representativeRows: reps,
      });
    });
    // what most rows complain about comes first; praise after every problem
    drafts.sort(
      (a, b) =>
        Number(a.sentiment === 'positive') - Number(b.sentiment === 'positive') || b.mention_count - a.mention_count || b.priority_score - a.priority_score,
    );
    drafts.forEach((t, i) => (t.theme_id = `T${i + 1}`));
    return drafts;
  }

  /** The rows whose ids the statistics cite (theme members and representatives), ascending. */
  citedRows(): number[] {
    this.drafts ??= this.buildDrafts();
    const rows = new Set<number>();
    for (const t of this.drafts) for (const d of [...t.feedbackRows, ...t.representativeRows]) rows.add(d);
    return [...rows].sort((a, b) => a - b);
  }

  /** Each row's theme (an index into the finished `themes`), or -1 when no theme explains it. */
  themeOfRows(): Int32Array {
    this.drafts ??= this.buildDrafts();
    const out = new Int32Array(this.n).fill(-1);
    this.drafts.forEach((t, k) => {
      for (const d of t.memberRows) out[d] = k;
    });
    return out;
  }

  /** The statistics; `idOf` gives the feedback_id of each row `citedRows` named. */
  finish(idOf: (row: number) => string): FeedbackStats {
    this.drafts ??= this.buildDrafts();
    const model = this.model as ThemeModel;
    const t = this.tally;
    const themes: ThemeSummary[] = this.drafts.map(({ memberRows: _all, feedbackRows, representativeRows, ...rest }) => ({
      ...rest,
      feedback_ids: feedbackRows.map(idOf),
      representative_ids: representativeRows.map(idOf),
    }));
    const topChannels = Object.entries(t.channels)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12);
    const unclustered = this.sampled ? (this.theme as Int8Array).reduce((s, x) => s + (x < 0 ? 1 : 0), 0) : model.unclustered.length;
    const sample = this.themeSample;
    return {
      analysed_rows: this.n,
      language: { code: this.lang, share: round(this.opts.language.share), sentiment_lexicon: sentimentSource(this.lang) },
      rating_scale: this.scale,
      average_rating: t.ratingCount > 0 ? round(t.ratingSum / t.ratingCount, 2) : null,
      rating_distribution: t.ratingDistribution,
      channels: Object.fromEntries(topChannels),
      date_range: t.from !== null && t.to !== null ? { from: t.from, to: t.to } : null,
      sentiment: { ...this.counts, average_score: round(this.scoreSum / this.n) },
      top_terms: this.sampled ? model.topTermsFrom(this.df as Int32Array) : model.topTerms,
      themes,
      unclustered_rows: unclustered,
      ...(sample ? { theme_sample: sample } : {}),
    };
  }
}

export const SAMPLE_METHOD =
  'themes (vocabulary, seeds, k-means) were fitted on a uniform random sample of the analysed rows (fixed seed); every analysed row was then placed in its nearest theme, and every count covers every row';
