/**
 * From CSV records to normalised feedback rows, one record at a time: which column is which
 * (decided once from the header and the first rows), then ids (generated, de-duplicated), text,
 * rating, channel, date and the other columns of each row. The whole-file parser and the
 * streaming reader share it, so both give the same rows.
 */
import type { FeedbackRow, IdSource } from './feedback-row.js';
import { CHANNEL_ALIASES, DATE_ALIASES, headerKey, ID_ALIASES, RATING_ALIASES } from './header-aliases.js';
import { chooseTextColumn, COLUMN_SAMPLE_ROWS } from './text-column.js';

/** What the reader learnt about the file besides its rows. */
export interface FeedbackFileFacts {
  /** Header names as written in the file. */
  columns: string[];
  idColumn: string | null;
  textColumn: string;
  ratingColumn: string | null;
  /** The channel / platform / source column as written, when there is one. */
  channelColumn?: string | null;
  idSource: IdSource;
  /** Data rows seen in the file (before max_rows and blank-text filtering). */
  totalDataRows: number;
  skippedBlank: number;
  truncated: boolean;
  warnings: string[];
}

export interface ColumnPlan {
  columns: string[];
  idCol: number;
  textCol: number;
  ratingCol: number;
  channelCol: number;
  dateCol: number;
  /** columns that are none of the above: kept verbatim as `extra` */
  known: Set<number>;
  warnings: string[];
}

// "4/5", "4 stars", "4星", "4分", "4点", "4 estrellas", "4 étoiles", "4 Sterne", "4 estrelas"
const RATING_SUFFIX_RE = /\s*(?:\/\s*\d+(?:\.\d+)?|星|颗星|分|点|つ星|stars?|estrellas?|[ée]toiles?|sterne?|estrelas?)$/iu;

const DIGITS_RE = /^\d{1,6}$/;

export function parseRating(v: string | undefined): number | null {
  if (v === undefined) return null;
  // the usual rating, plain digits: nothing below would change it
  if (DIGITS_RE.test(v)) return Number(v);
  const s = v.trim().normalize('NFKC').replace(',', '.');
  if (s === '') return null;
  // "★★★★☆" counts the filled stars
  if (/^[★☆]+$/u.test(s)) return [...s].filter((c) => c === '★').length;
  const n = Number(s.replace(RATING_SUFFIX_RE, ''));
  return Number.isFinite(n) ? n : null;
}

/** The first alias found among the header keys, or -1. */
export function columnOf(norm: string[], aliases: string[]): number {
  for (const a of aliases) {
    const i = norm.indexOf(a);
    if (i >= 0) return i;
  }
  return -1;
}

/** A rating header whose values are mostly not ratings (free text, say) is not the rating column. */
function mostlyRatings(data: string[][], c: number): boolean {
  let filled = 0;
  let numeric = 0;
  for (const r of data.slice(0, COLUMN_SAMPLE_ROWS)) {
    const v = r[c];
    if (v === undefined || v.trim() === '') continue;
    filled++;
    if (parseRating(v) !== null) numeric++;
  }
  return filled === 0 || numeric / filled >= 0.8;
}

/** The header record's names, as the plan and the facts report them. */
export function headerNames(record: string[]): string[] {
  return record.map((h) => h.replace(/^\uFEFF/, '').trim());
}

/**
 * Decide the columns from the header and the data rows seen so far: the first
 * `COLUMN_SAMPLE_ROWS` rows decide, plus the first value of a text-header column that is empty in
 * all of them (see `textAliasColumnsWithoutSample`).
 */
export function planColumns(columns: string[], data: string[][]): { ok: true; plan: ColumnPlan } | { ok: false; error: string } {
  const norm = columns.map(headerKey);
  const warnings: string[] = [];
  const idCol = columnOf(norm, ID_ALIASES);
  const choice = chooseTextColumn(columns, norm, data, idCol >= 0 ? [idCol] : []);
  if (!choice.ok) return { ok: false, error: choice.error };
  const textCol = choice.column;
  if (choice.warning) warnings.push(choice.warning);
  const ratingAlias = columnOf(norm, RATING_ALIASES);
  const ratingCol = ratingAlias >= 0 && ratingAlias !== textCol && mostlyRatings(data, ratingAlias) ? ratingAlias : -1;
  if (ratingAlias >= 0 && ratingCol < 0 && ratingAlias !== textCol)
    warnings.push(`column "${columns[ratingAlias]}" does not hold numeric ratings; ratings ignored`);
  const notText = (c: number): number => (c === textCol ? -1 : c);
  const channelCol = notText(columnOf(norm, CHANNEL_ALIASES));
  const dateCol = notText(columnOf(norm, DATE_ALIASES));
  return {
    ok: true,
    plan: { columns, idCol, textCol, ratingCol, channelCol, dateCol, known: new Set([idCol, textCol, ratingCol, channelCol, dateCol]), warnings },
  };
}

const NOT_BLANK = /\S/;

function trimmedOrNull(v: string | undefined): string | null {
  const t = (v ?? '').trim();
  return t === '' ? null : t;
}

/** Turns the data records of one file into rows, in file order; holds only the ids seen (for duplicates). */
export class RowNormaliser {
  /** rows returned so far */
  rows = 0;
  skippedBlank = 0;
  truncated = false;
  private generated = 0;
  private readonly seen = new Map<string, number>();

  constructor(
    readonly plan: ColumnPlan,
    private readonly limit = Number.POSITIVE_INFINITY,
  ) {}

  /** `i` is the record's 0-based index among the data rows. Null for a blank text, and for every record after `limit` rows. */
  push(rec: string[], i: number): FeedbackRow | null {
    if (this.truncated) return null;
    const { columns, idCol, textCol, ratingCol, channelCol, dateCol, known } = this.plan;
    const raw = rec[textCol] ?? '';
    const textValue = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
    // not blank: some character trim() would keep (no trimmed copy of every text)
    if (!NOT_BLANK.test(textValue)) {
      this.skippedBlank++;
      return null;
    }
    if (this.rows >= this.limit) {
      this.truncated = true;
      return null;
    }
    const rowNo = i + 1;
    let id = idCol >= 0 ? (rec[idCol] ?? '').trim() : '';
    if (id === '') {
      id = `row-${rowNo}`;
      this.generated++;
    }
    const dup = this.seen.get(id);
    if (dup !== undefined) {
      this.seen.set(id, dup + 1);
      id = `${id}-dup${dup + 1}`;
    } else this.seen.set(id, 1);
    const extra: Record<string, string> = {};
    for (let c = 0; c < columns.length; c++) {
      const v = rec[c];
      if (!known.has(c) && v !== undefined && v !== '') extra[columns[c] || `column_${c + 1}`] = v;
    }
    this.rows++;
    return {
      feedback_id: id,
      row: rowNo,
      text: textValue,
      rating: ratingCol >= 0 ? parseRating(rec[ratingCol]) : null,
      channel: channelCol >= 0 ? trimmedOrNull(rec[channelCol]) : null,
      date: dateCol >= 0 ? trimmedOrNull(rec[dateCol]) : null,
      extra,
    };
  }

  /** The facts once every record was pushed, or the error when no row had text. */
  finish(totalDataRows: number): { ok: true; value: FeedbackFileFacts } | { ok: false; error: string } {
    const { columns, idCol, textCol, ratingCol } = this.plan;
    if (this.rows === 0) {
      return {
        ok: false,
        error: `every row's text column "${columns[textCol]}" is empty (columns found: ${columns.map((c) => JSON.stringify(c)).join(', ')})`,
      };
    }
    const warnings = [...this.plan.warnings];
    if (this.skippedBlank > 0) warnings.push(`${this.skippedBlank} row(s) with empty text skipped`);
    if (idCol >= 0 && this.generated > 0) warnings.push(`${this.generated} row(s) had no id; generated row-<n> ids`);
    this.seen.clear();
    return {
      ok: true,
      value: {
        columns,
        idColumn: idCol >= 0 ? columns[idCol] : null,
        textColumn: columns[textCol],
        ratingColumn: ratingCol >= 0 ? columns[ratingCol] : null,
        channelColumn: this.plan.channelCol >= 0 ? columns[this.plan.channelCol] : null,
        idSource: idCol >= 0 ? 'column' : 'generated',
        totalDataRows,
        skippedBlank: this.skippedBlank,
        truncated: this.truncated,
        warnings,
      },
    };
  }
}
