/**
 * From the analysis (as feedback_stats returns it) and verbatim quotes to the three artifacts.
 * Pure, so the offline model and tests build exactly the same documents.
 */
import type { FeedbackStats, ThemeSummary } from './analysis/analyse-feedback.js';
import type { Evidence, FeedbackAnalysisDoc, ProductBacklogDoc } from './artifact-schemas.js';

/** "1 row", "12 rows". */
function rows(n: number): string {
  return n === 1 ? '1 row' : `${n} rows`;
}

export interface ArtifactInputs {
  productName: string;
  goal: string;
  csvPath: string;
  totalRows: number;
  idSource: 'column' | 'generated';
  stats: FeedbackStats;
  /** feedback_id → verbatim quote */
  quotes: Map<string, string>;
  /** optional note from a compute skill profile (large inputs) */
  profileNote?: string;
  /** how the goal was used: the segment it narrowed to (stats.segment), or why it narrowed nothing */
  scope?: string;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** "Chinese (zh)" for the Method section; the bare code when Intl has no name for it. */
function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

function ratingText(t: ThemeSummary, scaleMax: number | undefined): string {
  return t.average_rating === null ? '' : `, average rating ${t.average_rating}${scaleMax ? `/${scaleMax}` : ''}`;
}

function evidenceFor(t: ThemeSummary, quotes: Map<string, string>, max: number): Evidence[] {
  const ids = [...t.representative_ids, ...t.feedback_ids];
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    const q = quotes.get(id);
    if (q && !seen.has(id)) {
      seen.add(id);
      out.push({ feedback_id: id, evidence_text: q });
    }
    if (out.length >= max) break;
  }
  return out;
}

export function isProblem(t: ThemeSummary): boolean {
  return t.sentiment === 'negative' || t.sentiment === 'mixed';
}

/** Themes that have at least one quote; the schema requires evidence for each. */
function quotedThemes(i: ArtifactInputs): ThemeSummary[] {
  return i.stats.themes.filter((t) => evidenceFor(t, i.quotes, 1).length > 0);
}

function overall(i: ArtifactInputs): string {
  const s = i.stats;
  const n = s.analysed_rows;
  const neg = s.sentiment.negative / n;
  const pos = s.sentiment.positive / n;
  const rating = s.average_rating === null ? '' : ` Average rating ${s.average_rating}${s.rating_scale ? `/${s.rating_scale.max}` : ''}.`;
  const top = quotedThemes(i).filter(isProblem).slice(0, 3);
  const topText = top.length
    ? ` The most pressing themes are ${top.map((t) => `"${t.title}" (${rows(t.mention_count)}, ${t.severity} severity)`).join(', ')}.`
    : ' No theme is predominantly negative.';
  return `${n === 1 ? '1 feedback row' : `${n} feedback rows`} about ${i.productName} analysed: ${pct(neg)} negative, ${pct(pos)} positive.${rating}${topText}`;
}

export function buildFeedbackAnalysis(i: ArtifactInputs): FeedbackAnalysisDoc {
  const themes = quotedThemes(i);
  const max = i.stats.rating_scale?.max;
  const docThemes = themes.map((t) => ({
    theme_id: t.theme_id,
    title: t.title,
    summary: `${rows(t.mention_count)} (${pct(t.share)}) mention ${t.key_terms.join(', ')}; ${pct(t.negative_share)} negative, ${pct(t.positive_share)} positive${ratingText(t, max)}.`,
    key_terms: t.key_terms,
    mention_count: t.mention_count,
    share: t.share,
    sentiment: t.sentiment,
    severity: t.severity,
    average_rating: t.average_rating,
    feedback_ids: t.feedback_ids,
    evidence: evidenceFor(t, i.quotes, 3),
  }));
  const problems = themes.filter(isProblem).slice(0, 4);
  const praised = themes.filter((t) => t.sentiment === 'positive').slice(0, 2);
  const insights = [
    ...problems.map((t) => ({
      insight: `"${t.title}" is raised in ${rows(t.mention_count)} (${pct(t.share)}), ${pct(t.negative_share)} of them negative${ratingText(t, max)}: severity ${t.severity}, priority ${t.priority}.`,
      theme_id: t.theme_id,
      evidence: evidenceFor(t, i.quotes, 2),
    })),
    ...praised.map((t) => ({
      insight: `Users value "${t.title}": ${rows(t.mention_count)}, ${pct(t.positive_share)} positive; keep it intact while fixing the problems.`,
      theme_id: t.theme_id,
      evidence: evidenceFor(t, i.quotes, 2),
    })),
  ];
  if (insights.length === 0 && themes.length > 0) {
    const t = themes[0];
    insights.push({ insight: `The largest theme is "${t.title}" with ${rows(t.mention_count)}.`, theme_id: t.theme_id, evidence: evidenceFor(t, i.quotes, 2) });
  }
  return {
    product_name: i.productName,
    goal: i.goal.slice(0, 2000),
    source: {
      csv_path: i.csvPath,
      total_rows: i.totalRows,
      analysed_rows: i.stats.analysed_rows,
      id_source: i.idSource,
      ...(i.stats.theme_sample ? { sample: i.stats.theme_sample } : {}),
    },
    // a narrowed analysis says so first: its figures are the segment's
    summary: i.stats.segment && i.scope ? `${i.scope} ${overall(i)}` : overall(i),
    sentiment: i.stats.sentiment,
    themes: docThemes,
    insights,
  };
}

function itemTitle(t: ThemeSummary): string {
  const subject = t.title.charAt(0).toLowerCase() + t.title.slice(1);
  switch (t.sentiment) {
    case 'negative':
      return `Resolve ${subject} problems`;
    case 'mixed':
      return `Improve ${subject}`;
    case 'positive':
      return `Protect and build on ${subject}`;
    default:
      return `Review ${subject} feedback`;
  }
}

export function buildProductBacklog(i: ArtifactInputs): ProductBacklogDoc {
  const themes = quotedThemes(i);
  const largest = Math.max(1, ...themes.map((t) => t.mention_count));
  const max = i.stats.rating_scale?.max;
  const ordered = [...themes].sort((a, b) => Number(!isProblem(a)) - Number(!isProblem(b)) || b.priority_score - a.priority_score);
  return {
    product_name: i.productName,
    items: ordered.map((t, k) => ({
      id: `BL-${String(k + 1).padStart(3, '0')}`,
      title: itemTitle(t),
      description: `${t.mention_count} of ${rows(i.stats.analysed_rows)} (${pct(t.share)}) mention ${t.key_terms.join(', ')}; ${pct(t.negative_share)} negative${ratingText(t, max)}.`,
      priority: t.sentiment === 'positive' ? 'P3' : t.priority,
      severity: t.severity,
      theme_id: t.theme_id,
      mention_count: t.mention_count,
      priority_score: t.priority_score,
      rationale: `frequency ${t.mention_count}/${largest} × severity ${t.severity_score} = ${t.priority_score}; severity blends the negative share${t.low_rating_share === null ? '' : ', the low-rating share'} and sentiment intensity.`,
      evidence: evidenceFor(t, i.quotes, 2),
    })),
  };
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const cell = (s: string): string => oneLine(s).replace(/\|/g, '\\|');

export function buildInsightReport(i: ArtifactInputs, analysis: FeedbackAnalysisDoc, backlog: ProductBacklogDoc): string {
  const lines: string[] = [];
  // stats a model passed on without the language field read as English
  const lang = i.stats.language ?? { code: 'en', share: 1, sentiment_lexicon: 'AFINN-165 lexicon (`sentiment` package)' };
  lines.push(`# ${i.productName}: feedback insight report`, '');
  if (i.goal) lines.push(`_Goal: ${oneLine(i.goal)}_`, '');
  if (i.scope) lines.push(`_Scope: ${i.scope}_`, '');
  lines.push('## Executive Summary', '', analysis.summary, '');
  for (const item of backlog.items.slice(0, 3)) lines.push(`- **${item.priority}** ${item.title} (${rows(item.mention_count)}, ${item.severity})`);
  lines.push('', '## Key Themes', '');
  for (const t of analysis.themes) {
    lines.push(`### ${t.theme_id}. ${t.title}`, '', `${t.summary} Sentiment: ${t.sentiment}; severity: ${t.severity}.`, '');
    const e = t.evidence[0];
    if (e) lines.push(`> ${oneLine(e.evidence_text)} (${e.feedback_id})`, '');
  }
  lines.push('## Prioritized Backlog', '', '| ID | Priority | Item | Rows | Severity |', '|---|---|---|---|---|');
  for (const b of backlog.items) lines.push(`| ${b.id} | ${b.priority} | ${cell(b.title)} | ${b.mention_count} | ${b.severity} |`);
  lines.push('', '## Evidence', '');
  for (const t of analysis.themes) {
    for (const e of t.evidence) lines.push(`- ${e.feedback_id} (${t.theme_id}): "${oneLine(e.evidence_text)}"`);
  }
  lines.push(
    '',
    '## Method',
    '',
    `- Source: \`${i.csvPath}\`, ${i.totalRows} data rows, ${i.stats.analysed_rows} analysed; ids ${i.idSource === 'column' ? 'from the file' : 'generated from row numbers (row-<n>)'}.`,
    `- Language: ${languageName(lang.code)}${lang.share < 1 ? ` (${pct(lang.share)} of rows)` : ''}; words ${['zh', 'ja', 'th'].includes(lang.code) ? 'segmented by Intl.Segmenter (ICU)' : 'split on spaces'}, stop words of that language removed.`,
    lang.sentiment_lexicon
      ? `- Sentiment: ${lang.sentiment_lexicon}${lang.code === 'en' ? '' : ', with negation'}, blended with the rating when present.`
      : `- Sentiment: no lexicon is packaged for ${languageName(lang.code)}; from the ratings alone (rows without a rating are neutral).`,
    "- Themes: TF-IDF over word and two-word terms, seeded by salient co-occurring terms, refined by spherical k-means, near-duplicate themes merged; labels are each cluster's most distinctive terms.",
    ...(i.stats.theme_sample
      ? [
          `- Sample: the themes were fitted on a uniform random sample of ${i.stats.theme_sample.rows} of the ${rows(i.stats.analysed_rows)} (seed ${i.stats.theme_sample.seed}); every row was then placed in its nearest theme, so sentiment, mention counts, ratings and top terms count all ${rows(i.stats.analysed_rows)}.`,
        ]
      : []),
    '- Priority: frequency (rows in the theme ÷ largest theme) × severity (negative share, low-rating share, sentiment intensity).',
    `- Every quote is a verbatim part of the cited row, checked against \`runtime/evidence_index.json\`.`,
  );
  if (i.stats.unclustered_rows > 0)
    lines.push(
      `- ${rows(i.stats.unclustered_rows)} shared no salient terms with any theme and ${i.stats.unclustered_rows === 1 ? 'is' : 'are'} counted only in the totals.`,
    );
  if (i.profileNote) lines.push(`- ${oneLine(i.profileNote)}`);
  lines.push('');
  return lines.join('\n');
}

export function buildFinalAnswer(i: ArtifactInputs, backlog: ProductBacklogDoc, files: string[]): string {
  const top = backlog.items.filter((b) => b.priority !== 'P3').slice(0, 3);
  const list = (top.length ? top : backlog.items.slice(0, 3)).map((b, k) => `${k + 1}. ${b.priority} ${b.title}: ${b.description}`);
  return [
    `Analysed ${i.stats.analysed_rows === 1 ? '1 feedback row' : `${i.stats.analysed_rows} feedback rows`} for ${i.productName}${i.stats.segment ? ` (${i.stats.segment.column} ${i.stats.segment.values.join(' or ')} only, of ${rows(i.stats.segment.of_rows)}, as the goal asks)` : ''}. Top issues:`,
    ...list,
    // a paragraph of its own: right after the list, Markdown would read it as part of the last item
    '',
    `Artifacts: ${files.join(', ')}.`,
  ].join('\n');
}
