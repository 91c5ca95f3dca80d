/**
 * The whole analysis over normalised rows: sentiment per row, themes by clustering, severity from
 * negative sentiment and low ratings, priority from frequency × severity. Pure and deterministic.
 */
import { detectCorpusLanguage, type CorpusLanguage } from '../../shared/text-language.js';
import type { FeedbackRow } from './feedback-row.js';
import { isPraiseWord, normaliseRating, ratingScale, scoreSentiment, sentimentSource, type RowSentiment } from './sentiment-score.js';
import { clusterThemes } from './theme-clustering.js';

export type Severity = 'low' | 'medium' | 'high' | 'critical';
export type Priority = 'P0' | 'P1' | 'P2' | 'P3';
export type ThemeSentiment = 'positive' | 'neutral' | 'negative' | 'mixed';

export interface ThemeSummary {
  theme_id: string;
  title: string;
  key_terms: string[];
  /** stems behind key_terms, for evidence selection */
  key_stems: string[];
  mention_count: number;
  share: number;
  sentiment: ThemeSentiment;
  positive_share: number;
  negative_share: number;
  average_rating: number | null;
  low_rating_share: number | null;
  severity: Severity;
  severity_score: number;
  priority_score: number;
  priority: Priority;
  /** most central rows first, at most 20 */
  feedback_ids: string[];
  /** the rows to quote: central, and for problem themes negative first */
  representative_ids: string[];
}

export interface FeedbackStats {
  analysed_rows: number;
  /** the language most rows are written in (ISO 639-1), and what scored their sentiment */
  language: { code: string; share: number; sentiment_lexicon: string | null };
  rating_scale: { min: number; max: number } | null;
  average_rating: number | null;
  rating_distribution: Record<string, number>;
  channels: Record<string, number>;
  date_range: { from: string; to: string } | null;
  sentiment: { positive: number; neutral: number; negative: number; average_score: number };
  top_terms: Array<{ term: string; rows: number }>;
  themes: ThemeSummary[];
  unclustered_rows: number;
}

const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

export function severityOf(score: number): Severity {
  if (score >= 0.65) return 'critical';
  if (score >= 0.45) return 'high';
  if (score >= 0.25) return 'medium';
  return 'low';
}

export function priorityOf(score: number): Priority {
  if (score >= 0.45) return 'P0';
  if (score >= 0.25) return 'P1';
  if (score >= 0.1) return 'P2';
  return 'P3';
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** `keys` are the labels' stems ("calendar sync", "价格 太贵"): a two-word key is a title of its own. */
export function themeTitle(labels: string[], lang = 'en', keys: string[] = labels): string {
  // name the theme by its subject: skip labels made only of praise words when others exist
  const topical = labels.map((l, i) => [l, keys[i] ?? l] as const).filter(([l, k]) => !(k.includes(' ') ? l.split(' ') : [l]).every((w) => isPraiseWord(w, lang)));
  const use = topical.length > 0 ? topical : labels.map((l, i) => [l, keys[i] ?? l] as const);
  if (use.length === 0) return 'General feedback';
  if (use[0][1].includes(' ') || use.length === 1) return capitalise(use[0][0]);
  return capitalise(`${use[0][0]} & ${use[1][0]}`);
}

export function analyseFeedback(rows: FeedbackRow[], opts: { productName?: string; language?: CorpusLanguage } = {}): FeedbackStats {
  const language = opts.language ?? detectCorpusLanguage(rows.map((r) => r.text));
  const lang = language.code;
  const scale = ratingScale(rows.map((r) => r.rating));
  const norms = rows.map((r) => normaliseRating(r.rating, scale));
  const sentiments: RowSentiment[] = rows.map((r, i) => scoreSentiment(r.text, norms[i], lang));

  const ratingDist: Record<string, number> = {};
  let ratingSum = 0;
  let ratingN = 0;
  const channels: Record<string, number> = {};
  let from: string | null = null;
  let to: string | null = null;
  for (const r of rows) {
    if (r.rating !== null) {
      ratingDist[String(r.rating)] = (ratingDist[String(r.rating)] ?? 0) + 1;
      ratingSum += r.rating;
      ratingN++;
    }
    if (r.channel) channels[r.channel] = (channels[r.channel] ?? 0) + 1;
    if (r.date) {
      if (from === null || r.date < from) from = r.date;
      if (to === null || r.date > to) to = r.date;
    }
  }
  const counts = { positive: 0, neutral: 0, negative: 0 };
  let scoreSum = 0;
  for (const s of sentiments) {
    counts[s.label]++;
    scoreSum += s.score;
  }

  const { clusters, unclustered, topTerms } = clusterThemes(
    rows.map((r) => r.text),
    { ignoreWords: opts.productName ? [opts.productName] : [], lang },
  );
  const largest = Math.max(...clusters.map((c) => c.members.length));
  const themes: ThemeSummary[] = clusters.map((c, i) => {
    const size = c.members.length;
    let pos = 0;
    let neg = 0;
    let intensity = 0;
    let rSum = 0;
    let rN = 0;
    let low = 0;
    for (const d of c.members) {
      const s = sentiments[d];
      if (s.label === 'positive') pos++;
      if (s.label === 'negative') neg++;
      intensity += Math.max(0, -s.signal);
      const rn = norms[d];
      if (rn !== null) {
        rN++;
        rSum += rows[d].rating as number;
        if (rn <= 0.4) low++;
      }
    }
    const negShare = neg / size;
    const posShare = pos / size;
    const lowShare = rN > 0 ? low / rN : null;
    const meanIntensity = intensity / size;
    const severityScore =
      lowShare === null ? 0.7 * negShare + 0.3 * meanIntensity : 0.5 * negShare + 0.3 * lowShare + 0.2 * meanIntensity;
    const frequency = size / largest;
    const priorityScore = frequency * severityScore;
    const sentiment: ThemeSentiment =
      negShare >= 0.5 ? 'negative' : posShare >= 0.6 ? 'positive' : posShare >= 0.25 && negShare >= 0.25 ? 'mixed' : 'neutral';
    const problemFirst = [...c.members].sort((a, b) =>
      sentiment === 'positive' ? 0 : sentiments[a].signal - sentiments[b].signal,
    );
    // Central rows first, then within the top central ones prefer the clearest voice of the theme.
    const central = c.members.slice(0, Math.max(5, Math.ceil(size * 0.3)));
    const centralSet = new Set(central);
    const reps = (sentiment === 'positive' ? central : problemFirst.filter((d) => centralSet.has(d))).slice(0, 5);
    return {
      theme_id: `T${i + 1}`,
      title: themeTitle(c.keyTermLabels, lang, c.keyTerms),
      key_terms: c.keyTermLabels,
      key_stems: c.keyTerms,
      mention_count: size,
      share: round(size / rows.length),
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
      feedback_ids: c.members.slice(0, 20).map((d) => rows[d].feedback_id),
      representative_ids: reps.map((d) => rows[d].feedback_id),
    };
  });
  themes.sort((a, b) => b.priority_score - a.priority_score || b.mention_count - a.mention_count);
  themes.forEach((t, i) => (t.theme_id = `T${i + 1}`));

  const topChannels = Object.entries(channels)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  return {
    analysed_rows: rows.length,
    language: { code: lang, share: round(language.share), sentiment_lexicon: sentimentSource(lang) },
    rating_scale: scale,
    average_rating: ratingN > 0 ? round(ratingSum / ratingN, 2) : null,
    rating_distribution: ratingDist,
    channels: Object.fromEntries(topChannels),
    date_range: from !== null && to !== null ? { from, to } : null,
    sentiment: { ...counts, average_score: round(scoreSum / rows.length) },
    top_terms: topTerms,
    themes,
    unclustered_rows: unclustered.length,
  };
}
