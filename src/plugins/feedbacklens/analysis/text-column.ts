/**
 * Which column holds the feedback text: a known header first, else the column whose values look
 * most like sentences. A file where no column does (`name,age`) is refused with a diagnosis,
 * never analysed as if names were feedback.
 */
import { TEXT_ALIASES, textAliasExamples } from './header-aliases.js';

/**
 * Rows looked at to judge a column; enough to be representative, cheap on 10,000-row files. A
 * streaming reader holds this many rows back until the columns are decided.
 */
export const COLUMN_SAMPLE_ROWS = 200;
const SAMPLE_ROWS = COLUMN_SAMPLE_ROWS;
/** A column must score at least this (0–1) on average to count as free text. */
export const MIN_TEXT_SCORE = 0.35;

const SPACELESS_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;
const LETTER_RE = /\p{L}/gu;
const WORD_RE = /\p{L}[\p{L}\p{M}'’-]*/gu;
const DATE_RE = /^\d{1,4}[-/.年]\d{1,2}[-/.月]\d{1,4}日?(?:[ T]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const URL_OR_EMAIL_RE = /^(?:[a-z][a-z0-9+.-]*:\/\/\S+|[^\s@]+@[^\s@]+\.[^\s@]+|www\.\S+)$/i;

/** How much one value looks like a sentence someone wrote, 0 (a name, number, date, URL) to 1. */
export function sentenceScore(value: string): number {
  const v = value.trim();
  if (v === '' || Number.isFinite(Number(v.replace(',', '.'))) || DATE_RE.test(v) || URL_OR_EMAIL_RE.test(v)) return 0;
  const nonSpace = v.replace(/\s+/g, '').length;
  const letters = v.match(LETTER_RE)?.length ?? 0;
  if (nonSpace === 0 || letters / nonSpace < 0.5) return 0;
  const spaceless = v.match(SPACELESS_RE)?.length ?? 0;
  // in scripts written without spaces a word is about two characters
  const words = (v.replace(SPACELESS_RE, ' ').match(WORD_RE)?.length ?? 0) + spaceless / 2;
  // one word is a label ("alice", "bug"); five or more read as a sentence
  return Math.max(0, Math.min(1, (words - 1) / 4));
}

export interface ColumnScore {
  column: number;
  score: number;
  nonEmpty: number;
}

/** Mean sentence score over the sampled non-empty values, damped for columns of repeated labels. */
export function scoreColumn(data: string[][], c: number): ColumnScore {
  let sum = 0;
  let nonEmpty = 0;
  const distinct = new Set<string>();
  for (const r of data.slice(0, SAMPLE_ROWS)) {
    const v = (r[c] ?? '').trim();
    if (v === '') continue;
    nonEmpty++;
    distinct.add(v);
    sum += sentenceScore(v);
  }
  if (nonEmpty === 0) return { column: c, score: 0, nonEmpty };
  // "Bug report" / "Feature request" repeated down a column is a category, not feedback
  const variety = nonEmpty < 4 ? 1 : Math.min(1, distinct.size / nonEmpty / 0.5);
  return { column: c, score: (sum / nonEmpty) * variety, nonEmpty };
}

export type TextColumnChoice = { ok: true; column: number; by: 'header' | 'content'; warning?: string } | { ok: false; error: string };

function hasAnyText(data: string[][], c: number): { any: boolean; onlyNumbers: boolean } {
  let any = false;
  let onlyNumbers = true;
  for (const r of data.slice(0, SAMPLE_ROWS)) {
    const v = (r[c] ?? '').trim();
    if (v === '') continue;
    any = true;
    if (!Number.isFinite(Number(v.replace(',', '.')))) onlyNumbers = false;
  }
  if (!any) for (const r of data) if ((r[c] ?? '').trim() !== '') return { any: true, onlyNumbers: false };
  return { any, onlyNumbers: any && onlyNumbers };
}

/**
 * Text-header columns with no value among the sampled rows: for these `chooseTextColumn` looks at
 * every row, so a streaming reader must find their first value further down before deciding.
 */
export function textAliasColumnsWithoutSample(keys: string[], data: string[][], exclude: number[] = []): number[] {
  const out: number[] = [];
  for (const a of TEXT_ALIASES) {
    const c = keys.indexOf(a);
    if (c < 0 || exclude.includes(c) || out.includes(c)) continue;
    if (data.slice(0, SAMPLE_ROWS).every((r) => (r[c] ?? '').trim() === '')) out.push(c);
  }
  return out;
}

function describeColumns(columns: string[], data: string[][]): string {
  return columns
    .map((name, c) => {
      const sample = data.find((r) => (r[c] ?? '').trim() !== '')?.[c]?.trim();
      const shown = sample === undefined ? 'empty' : JSON.stringify(sample.length > 30 ? `${sample.slice(0, 30)}…` : sample);
      return `${JSON.stringify(name)} (${shown})`;
    })
    .join(', ');
}

/**
 * `keys` are the headers in `headerKey` form; `exclude` are columns already taken (the id).
 * Header aliases win unless that column is empty or holds only numbers.
 */
export function chooseTextColumn(columns: string[], keys: string[], data: string[][], exclude: number[] = []): TextColumnChoice {
  const how = `Name the column that holds the feedback text one of ${textAliasExamples()} (or put the text in such a column).`;
  let emptyAlias: number | null = null;
  let numericAlias: number | null = null;
  for (const a of TEXT_ALIASES) {
    const c = keys.indexOf(a);
    if (c < 0 || exclude.includes(c)) continue;
    const t = hasAnyText(data, c);
    if (t.any && !t.onlyNumbers) return { ok: true, column: c, by: 'header' };
    if (!t.any) emptyAlias ??= c;
    else numericAlias ??= c;
  }
  const scored = columns
    .map((_, c) => c)
    .filter((c) => !exclude.includes(c) && c !== emptyAlias && c !== numericAlias)
    .map((c) => scoreColumn(data, c))
    .sort((a, b) => b.score - a.score || a.column - b.column);
  const best = scored[0];
  const found = `columns found: ${describeColumns(columns, data)}`;
  if (best && best.score >= MIN_TEXT_SCORE) {
    const why =
      emptyAlias !== null
        ? `the text column "${columns[emptyAlias]}" is empty in every row; using column "${columns[best.column]}", whose values read as sentences`
        : numericAlias !== null
          ? `the text column "${columns[numericAlias]}" holds only numbers; using column "${columns[best.column]}", whose values read as sentences`
          : `no known text header; using column "${columns[best.column]}", whose values read as sentences`;
    return { ok: true, column: best.column, by: 'content', warning: why };
  }
  if (emptyAlias !== null) {
    return {
      ok: false,
      error: `no text column found: the text column "${columns[emptyAlias]}" is empty in every row and no other column holds free text (${found}). ${how}`,
    };
  }
  if (numericAlias !== null) {
    return {
      ok: false,
      error: `no text column found: the text column "${columns[numericAlias]}" holds only numbers and no other column holds free text (${found}). ${how}`,
    };
  }
  return { ok: false, error: `no text column found: no column holds free-text feedback (${found}). ${how}` };
}
