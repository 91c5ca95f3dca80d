/**
 * CSV text → normalised feedback rows. Handles quoted commas/newlines (csv-parse), a BOM,
 * `;`/tab/`|` delimiters, header aliases in several languages (header-aliases.ts), a text column
 * found by content when no header names it, missing or duplicate ids and blank rows.
 */
import { parse } from 'csv-parse/sync';
import type { FeedbackRow } from './feedback-row.js';
import { headerNames, planColumns, RowNormaliser, type FeedbackFileFacts } from './feedback-row-normaliser.js';

export { ID_ALIASES, TEXT_ALIASES, RATING_ALIASES, CHANNEL_ALIASES, DATE_ALIASES } from './header-aliases.js';
export { parseRating } from './feedback-row-normaliser.js';

export interface ParsedFeedback extends FeedbackFileFacts {
  rows: FeedbackRow[];
}

export type ParseResult = { ok: true; value: ParsedFeedback } | { ok: false; error: string };

/** csv-parse options every reader of a feedback file uses (the delimiter is detected per file). */
export const CSV_OPTIONS = { relax_column_count: true, relax_quotes: true, skip_empty_lines: true, bom: true } as const;

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

/** The whole file in memory: for the library API and small inputs (the plugin streams, see feedback-csv-stream.ts). */
export function parseFeedbackCsv(text: string, opts: { maxRows?: number } = {}): ParseResult {
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') return { ok: false, error: 'the CSV file is empty' };
  let records: string[][];
  try {
    records = parse(source, { delimiter: detectDelimiter(source), ...CSV_OPTIONS }) as string[][];
  } catch (e) {
    return { ok: false, error: `the CSV could not be parsed: ${(e as Error).message}` };
  }
  if (records.length === 0) return { ok: false, error: 'the CSV file has no rows' };
  const columns = headerNames(records[0]);
  const data = records.slice(1);
  if (data.length === 0) return { ok: false, error: `the CSV has a header (${columns.join(', ')}) but no data rows` };
  const planned = planColumns(columns, data);
  if (!planned.ok) return planned;
  const normaliser = new RowNormaliser(planned.plan, opts.maxRows);
  const rows: FeedbackRow[] = [];
  for (let i = 0; i < data.length && !normaliser.truncated; i++) {
    const row = normaliser.push(data[i], i);
    if (row) rows.push(row);
  }
  const done = normaliser.finish(data.length);
  if (!done.ok) return done;
  return { ok: true, value: { rows, ...done.value } };
}
