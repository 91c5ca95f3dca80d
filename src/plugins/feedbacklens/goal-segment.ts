/**
 * The segment a goal names. A file's segment columns are its channel / platform column and every
 * other column with a few short values (plan, region, tier…). A goal that names one of their values
 * ("what do our iOS users hate?", "enterprise customers", 移动端用户) narrows the analysis to the
 * rows with it; "mobile" / "desktop" stand for the platforms they cover. A goal that names none is
 * not silently ignored: the report says the analysis covers every row and why.
 */
import type { FeedbackTally } from './analysis/feedback-tally.js';

export interface SegmentColumn {
  column: string;
  /** value → rows, most rows first */
  values: Record<string, number>;
}

export interface GoalSegment {
  column: string;
  values: string[];
}

/** The rows a segment keeps, with how many of how many. */
export interface SegmentScope extends GoalSegment {
  rows: number;
  of_rows: number;
}

/** Words of a goal that stand for several platform values. */
const GROUPS: Array<{ words: RegExp; values: RegExp }> = [
  {
    words: /\b(mobile|phones?|smartphones?|móvil(es)?|movil(es)?|celular(es)?)\b|移动端|手机|移动/iu,
    values: /^(ios|android|iphone|ipad|mobile|app|móvil|movil|手机|移动端|安卓|苹果)$/iu,
  },
  {
    words: /\b(desktop|computers?|escritorio|ordenador(es)?)\b|桌面|电脑|网页/iu,
    values: /^(web|desktop|windows|mac|macos|browser|escritorio|桌面端?|电脑|网页版?)$/iu,
  },
];

const NUMERIC = /^[\d\s.,:/%$€-]+$/;

/** Segment columns of a tallied file: the channel column (`channelColumn`) and the few-valued others. */
export function segmentColumns(tally: FeedbackTally, channelColumn: string | null | undefined): SegmentColumn[] {
  const out: SegmentColumn[] = [];
  const add = (column: string, values: Iterable<[string, number]>) => {
    const sorted = [...values].filter(([v]) => !NUMERIC.test(v)).sort((a, b) => b[1] - a[1]);
    // one value says nothing about a part of the rows
    if (sorted.length >= 2) out.push({ column, values: Object.fromEntries(sorted) });
  };
  if (channelColumn) add(channelColumn, Object.entries(tally.channels));
  for (const [column, values] of tally.extraValues) if (values) add(column, values);
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether the goal names this value: as a whole word (Latin scripts) or as written (CJK). */
function names(goal: string, value: string): boolean {
  const v = value.trim();
  if (v.length < 2) return false;
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(v)) return goal.includes(v);
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(v)}s?($|[^\\p{L}\\p{N}])`, 'iu').test(goal);
}

/** The segment the goal names, or null. The column whose values it names most wins. */
export function goalSegment(goal: string, columns: readonly SegmentColumn[]): GoalSegment | null {
  let best: GoalSegment | null = null;
  for (const c of columns) {
    const values = Object.keys(c.values);
    const named = new Set(values.filter((v) => names(goal, v)));
    for (const g of GROUPS) if (g.words.test(goal)) for (const v of values) if (g.values.test(v.trim())) named.add(v);
    // every value named is no narrowing
    if (named.size === 0 || named.size === values.length) continue;
    if (!best || named.size > best.values.length) best = { column: c.column, values: values.filter((v) => named.has(v)) };
  }
  return best;
}

/** Whether a row (its channel, or its extra column) is in the segment. */
export function inSegment(row: { channel: string | null; extra: Record<string, string> }, seg: GoalSegment, channelColumn: string | null | undefined): boolean {
  const v = seg.column === channelColumn ? row.channel : row.extra[seg.column];
  return v !== null && v !== undefined && seg.values.includes(v.trim());
}

/** The report's sentence on how the goal was used. */
export function scopeSentence(scope: SegmentScope | null, columns: readonly SegmentColumn[]): string {
  if (scope) {
    const which = scope.values.join(' or ');
    return `The goal names ${which}, so this analysis covers only the ${scope.rows} of ${scope.of_rows} rows whose ${scope.column} is ${which}.`;
  }
  if (columns.length === 0)
    return 'Every row is analysed: the file has no column (platform, channel, plan…) to narrow by, so a segment in the goal could not be used.';
  const listed = columns.map((c) => `${c.column}: ${Object.keys(c.values).slice(0, 6).join(', ')}`).join('; ');
  return `Every row is analysed: the goal names no value of the file's segment columns (${listed}), so it could not narrow the analysis.`;
}
