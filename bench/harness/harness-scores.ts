/**
 * The harness's scores: a generated export is analysed the way the feedbacklens plugin analyses a
 * file (the language of the whole file, the segment the goal names through the file's own segment
 * columns, the product name given) and the result is judged against the rows' true topics:
 *
 * - headline: the first theme (the report's P0) is about the analysed rows' largest topic;
 * - whole: each topic with at least 5% of the analysed rows has one theme holding ≥ 70% of its rows;
 * - pure: every theme's rows are ≥ 80% one topic (a theme claims only rows about it);
 * - clean: no theme's title or leading term is filler, a greeting or sign-off, or the product's own word.
 */
import { analyseFeedbackRows } from '../../src/plugins/feedbacklens/analysis/analyse-feedback.js';
import type { ThemeSummary } from '../../src/plugins/feedbacklens/analysis/feedback-stats.js';
import { FeedbackTally } from '../../src/plugins/feedbacklens/analysis/feedback-tally.js';
import { parseFeedbackCsv } from '../../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { goalSegment, inSegment, segmentColumns } from '../../src/plugins/feedbacklens/goal-segment.js';
import { detectCorpusLanguage } from '../../src/plugins/shared/text-language.js';
import { generateExport, type GeneratedExport, type LanguageMix } from './feedback-export-generator.js';
import { FILLER, GREETINGS, type HarnessLang, PRODUCT_MENTIONS, SIGN_OFFS, TOPICS } from './feedback-vocabulary.js';

export const SCORE_NAMES = ['headline', 'whole', 'pure', 'clean'] as const;
export type ScoreName = (typeof SCORE_NAMES)[number];

export interface ExportScore {
  seed: number;
  mix: LanguageMix;
  passed: Record<ScoreName, boolean>;
  /** what failed, in words (empty when every score passed) */
  failures: string[];
}

export const MIN_TOPIC_SHARE = 0.05;
export const MIN_WHOLE_SHARE = 0.7;
export const MIN_PURITY = 0.8;

/** Words that name no topic: `said` are filler, greetings and sign-offs; `product` the product's name and words. */
function noTopicWords(g: GeneratedExport): { said: Set<string>; product: Set<string> } {
  const langs: HarnessLang[] = ['en', 'es', 'zh'];
  const topicWords = new Set(
    TOPICS.filter((t) => g.topics.includes(t.id)).flatMap((t) => langs.flatMap((l) => t.phrasings[l].flatMap((p) => wordsOf(p.replaceAll('{objs}', ''))))),
  );
  const collect = (phrases: string[]): Set<string> => {
    const out = new Set<string>();
    for (const p of phrases) {
      for (const w of wordsOf(p.replaceAll('{product}', g.product.name))) if (!topicWords.has(w)) out.add(w);
      // a Chinese phrase is one "word" here; labels inside it are caught by namesNoTopic
      if (/\p{Script=Han}/u.test(p)) out.add(p.replace(/[^\p{L}\p{N}]/gu, ''));
    }
    return out;
  };
  const said = collect(langs.flatMap((l) => [...FILLER[l], ...GREETINGS[l], ...SIGN_OFFS[l]]));
  const product = collect(langs.flatMap((l) => [...PRODUCT_MENTIONS[l], g.product.objs[l], ...g.product.words[l]]));
  product.add(g.product.name.toLowerCase());
  return { said, product };
}

function wordsOf(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** Whether a Chinese label lies inside one of these phrases. */
function insideHan(label: string, phrases: Set<string>): boolean {
  const l = label.replace(/[^\p{L}\p{N}]/gu, '');
  return [...phrases].some((b) => /\p{Script=Han}/u.test(b) && b.includes(l));
}

/** Whether a label is built on filler, a greeting or sign-off (any of its words), or on the product's words only. */
function namesNoTopic(label: string, banned: { said: Set<string>; product: Set<string> }): boolean {
  const words = wordsOf(label);
  if (words.length === 0) return true;
  if (/\p{Script=Han}/u.test(label)) return insideHan(label, banned.said) || insideHan(label, banned.product);
  return words.some((w) => banned.said.has(w)) || words.every((w) => banned.product.has(w));
}

export interface HarnessAnalysis {
  /** the themes, headline first */
  themes: Array<Pick<ThemeSummary, 'title' | 'key_terms' | 'mention_count'>>;
  /** the analysed rows' true topics, in the order they were analysed */
  topics: string[];
  themeOfRow: Int32Array;
}

/** The export analysed as the plugin would: whole-file language, the goal's segment, the product name. */
export function analyseExport(g: GeneratedExport): HarnessAnalysis {
  const parsed = parseFeedbackCsv(g.csv);
  if (!parsed.ok) throw new Error(`seed ${g.seed} ${g.mix}: ${parsed.error}`);
  const { rows: all, channelColumn } = parsed.value;
  const tally = new FeedbackTally();
  for (const r of all) tally.add(r);
  const segment = goalSegment(g.goal, segmentColumns(tally, channelColumn));
  const rows = segment ? all.filter((r) => inSegment(r, segment, channelColumn)) : all;
  const topicOf = new Map(g.rows.map((r) => [r.id, r.topic]));
  const language = detectCorpusLanguage(all.map((r) => r.text));
  const { stats, themeOfRow } = analyseFeedbackRows(rows, { language, productName: g.product.name });
  return { themes: stats.themes, topics: rows.map((r) => topicOf.get(r.feedback_id) as string), themeOfRow };
}

/** The four scores of one analysed export. */
export function scoreAnalysis(g: GeneratedExport, a: HarnessAnalysis): ExportScore {
  const failures: string[] = [];
  const { themes, topics, themeOfRow } = a;
  const n = topics.length;
  // per theme: its rows by topic
  const byTheme = themes.map(() => new Map<string, number>());
  const topicRows = new Map<string, number>();
  topics.forEach((t, i) => {
    topicRows.set(t, (topicRows.get(t) ?? 0) + 1);
    const k = themeOfRow[i];
    if (k >= 0) byTheme[k].set(t, (byTheme[k].get(t) ?? 0) + 1);
  });
  const majority = (k: number): { topic: string; share: number } => {
    const entries = [...byTheme[k]].sort((x, y) => y[1] - x[1]);
    const size = entries.reduce((s, e) => s + e[1], 0);
    return entries.length === 0 ? { topic: '', share: 0 } : { topic: entries[0][0], share: entries[0][1] / size };
  };
  const name = (k: number): string => `"${themes[k].title}" (${themes[k].mention_count} rows)`;

  const headline = themes.length > 0 && majority(0).topic === g.largest;
  if (!headline) failures.push(`headline ${themes.length > 0 ? `${name(0)} is about ${majority(0).topic}` : 'missing'}, the largest topic is ${g.largest}`);

  let whole = true;
  for (const [topic, count] of topicRows) {
    if (count < MIN_TOPIC_SHARE * n) continue;
    const best = Math.max(0, ...themes.map((_, k) => byTheme[k].get(topic) ?? 0));
    if (best < MIN_WHOLE_SHARE * count) {
      whole = false;
      failures.push(`${topic} (${count} rows) is split: its largest theme holds ${best}`);
    }
  }

  let pure = true;
  themes.forEach((_, k) => {
    const m = majority(k);
    if (m.share < MIN_PURITY) {
      pure = false;
      failures.push(`${name(k)} is ${Math.round(m.share * 100)}% ${m.topic}`);
    }
  });

  const banned = noTopicWords(g);
  let clean = true;
  themes.forEach((t, k) => {
    const lead = [t.title, ...t.key_terms.slice(0, 1)].find((l) => namesNoTopic(l, banned));
    if (lead !== undefined) {
      clean = false;
      failures.push(`${name(k)} is built on "${lead}"`);
    }
  });
  return { seed: g.seed, mix: g.mix, passed: { headline, whole, pure, clean }, failures };
}

export function scoreExport(seed: number, mix: LanguageMix): ExportScore {
  const g = generateExport(seed, mix);
  return scoreAnalysis(g, analyseExport(g));
}

/** Pass rate of each score (and of all four together) over the scored exports. */
export function passRates(scores: ExportScore[]): Record<ScoreName | 'all', number> {
  const rate = (f: (s: ExportScore) => boolean): number => scores.filter(f).length / Math.max(1, scores.length);
  return {
    headline: rate((s) => s.passed.headline),
    whole: rate((s) => s.passed.whole),
    pure: rate((s) => s.passed.pure),
    clean: rate((s) => s.passed.clean),
    all: rate((s) => SCORE_NAMES.every((k) => s.passed[k])),
  };
}
