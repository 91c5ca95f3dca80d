/**
 * CSV text → normalised feedback rows. Handles quoted commas/newlines (csv-parse), a BOM,
 * `;`/tab/`|` delimiters, header aliases in several languages (header-aliases.ts), a text column
 * found by content when no header names it, missing or duplicate ids and blank rows.
 */
import { parse } from 'csv-parse/sync';
import type { FeedbackRow, IdSource } from './feedback-row.js';
import { CHANNEL_ALIASES, DATE_ALIASES, headerKey, ID_ALIASES, RATING_ALIASES } from './header-aliases.js';
import { chooseTextColumn } from './text-column.js';

export { ID_ALIASES, TEXT_ALIASES, RATING_ALIASES, CHANNEL_ALIASES, DATE_ALIASES } from './header-aliases.js';

export interface ParsedFeedback {
  rows: FeedbackRow[];
  /** Header names as written in the file. */
  columns: string[];
  idColumn: string | null;
  textColumn: string;
  ratingColumn: string | null;
  idSource: IdSource;
  /** Data rows seen in the file (before max_rows and blank-text filtering). */
  totalDataRows: number;
  skippedBlank: number;
  truncated: boolean;
  warnings: string[];
}

export type ParseResult = { ok: true; value: ParsedFeedback } | { ok: false; error: string };

/** The delimiter that appears most often outside quotes in the header line. */
export function detectDelimiter(text: string): string {
  let header = '';
  let inQuotes = false;
  for (const ch of text) {
    if (ch === '"') inQuotes = !inQuotes;
    if (!inQuotes && (ch === '\n' || ch === '\r')) break;
    if (!inQuotes) header += ch;
  }
  let best = ',';
  let bestCount = 0;
  for (const d of [',', ';', '\t', '|']) {
    const count = header.split(d).length - 1;
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

function findColumn(norm: string[], aliases: string[]): number {
  for (const a of aliases) {
    const i = norm.indexOf(a);
    if (i >= 0) return i;
  }
  return -1;
}

// "4/5", "4 stars", "4星", "4分", "4点", "4 estrellas", "4 étoiles", "4 Sterne", "4 estrelas"
const RATING_SUFFIX_RE = /\s*(?:\/\s*\d+(?:\.\d+)?|星|颗星|分|点|つ星|stars?|estrellas?|[ée]toiles?|sterne?|estrelas?)$/iu;

export function parseRating(v: string | undefined): number | null {
  if (v === undefined) return null;
  const s = v.trim().normalize('NFKC').replace(',', '.');
  if (s === '') return null;
  // "★★★★☆" counts the filled stars
  if (/^[★☆]+$/u.test(s)) return [...s].filter((c) => c === '★').length;
  const n = Number(s.replace(RATING_SUFFIX_RE, ''));
  return Number.isFinite(n) ? n : null;
}

/** A rating header whose values are mostly not ratings (free text, say) is not the rating column. */
function mostlyRatings(data: string[][], c: number): boolean {
  let filled = 0;
  let numeric = 0;
  for (const r of data.slice(0, 200)) {
    const v = r[c];
    if (v === undefined || v.trim() === '') continue;
    filled++;
    if (parseRating(v) !== null) numeric++;
  }
  return filled === 0 || numeric / filled >= 0.8;
}

export function parseFeedbackCsv(text: string, opts: { maxRows?: number } = {}): ParseResult {
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') return { ok: false, error: 'the CSV file is empty' };
  let records: string[][];
  try {
    records = parse(source, {
      delimiter: detectDelimiter(source),
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      bom: true,
    }) as string[][];
  } catch (e) {
    return { ok: false, error: `the CSV could not be parsed: ${(e as Error).message}` };
  }
  if (records.length === 0) return { ok: false, error: 'the CSV file has no rows' };
  const columns = records[0].map((h) => h.replace(/^\uFEFF/, '').trim());
  const norm = columns.map(headerKey);
  const data = records.slice(1);
  if (data.length === 0) return { ok: false, error: `the CSV has a header (${columns.join(', ')}) but no data rows` };
  const warnings: string[] = [];

  const idCol = findColumn(norm, ID_ALIASES);
  const choice = chooseTextColumn(columns, norm, data, idCol >= 0 ? [idCol] : []);
  if (!choice.ok) return { ok: false, error: choice.error };
  const textCol = choice.column;
  if (choice.warning) warnings.push(choice.warning);
  const ratingAlias = findColumn(norm, RATING_ALIASES);
  const ratingCol = ratingAlias >= 0 && ratingAlias !== textCol && mostlyRatings(data, ratingAlias) ? ratingAlias : -1;
  if (ratingAlias >= 0 && ratingCol < 0 && ratingAlias !== textCol) warnings.push(`column "${columns[ratingAlias]}" does not hold numeric ratings; ratings ignored`);
  const notText = (c: number): number => (c === textCol ? -1 : c);
  const channelCol = notText(findColumn(norm, CHANNEL_ALIASES));
  const dateCol = notText(findColumn(norm, DATE_ALIASES));
  const known = new Set([idCol, textCol, ratingCol, channelCol, dateCol]);

  const limit = opts.maxRows ?? Number.POSITIVE_INFINITY;
  const rows: FeedbackRow[] = [];
  const seen = new Map<string, number>();
  let skippedBlank = 0;
  let truncated = false;
  let generated = 0;
  for (let i = 0; i < data.length; i++) {
    const rec = data[i];
    const textValue = (rec[textCol] ?? '').replace(/\r\n?/g, '\n');
    if (textValue.trim() === '') {
      skippedBlank++;
      continue;
    }
    if (rows.length >= limit) {
      truncated = true;
      break;
    }
    const rowNo = i + 1;
    let id = idCol >= 0 ? (rec[idCol] ?? '').trim() : '';
    if (id === '') {
      id = `row-${rowNo}`;
      generated++;
    }
    const dup = seen.get(id);
    if (dup !== undefined) {
      seen.set(id, dup + 1);
      id = `${id}-dup${dup + 1}`;
    } else seen.set(id, 1);
    const extra: Record<string, string> = {};
    columns.forEach((name, c) => {
      if (!known.has(c) && rec[c] !== undefined && rec[c] !== '') extra[name || `column_${c + 1}`] = rec[c];
    });
    rows.push({
      feedback_id: id,
      row: rowNo,
      text: textValue,
      rating: ratingCol >= 0 ? parseRating(rec[ratingCol]) : null,
      channel: channelCol >= 0 && (rec[channelCol] ?? '').trim() !== '' ? rec[channelCol].trim() : null,
      date: dateCol >= 0 && (rec[dateCol] ?? '').trim() !== '' ? rec[dateCol].trim() : null,
      extra,
    });
  }
  if (rows.length === 0) {
    return { ok: false, error: `every row's text column "${columns[textCol]}" is empty (columns found: ${columns.map((c) => JSON.stringify(c)).join(', ')})` };
  }
  if (skippedBlank > 0) warnings.push(`${skippedBlank} row(s) with empty text skipped`);
  if (idCol >= 0 && generated > 0) warnings.push(`${generated} row(s) had no id; generated row-<n> ids`);
  return {
    ok: true,
    value: {
      rows,
      columns,
      idColumn: idCol >= 0 ? columns[idCol] : null,
      textColumn: columns[textCol],
      ratingColumn: ratingCol >= 0 ? columns[ratingCol] : null,
      idSource: idCol >= 0 ? 'column' : 'generated',
      totalDataRows: data.length,
      skippedBlank,
      truncated,
      warnings,
    },
  };
}
