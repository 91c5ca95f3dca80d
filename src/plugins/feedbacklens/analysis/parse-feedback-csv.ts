/**
 * CSV text → normalised feedback rows. Handles quoted commas/newlines (csv-parse), a BOM,
 * `;`/tab/`|` delimiters, header aliases, missing or duplicate ids and blank rows.
 */
import { parse } from 'csv-parse/sync';
import type { FeedbackRow, IdSource } from './feedback-row.js';

export const ID_ALIASES = ['feedback_id', 'id', 'feedbackid', 'review_id', 'response_id', 'ticket_id', 'comment_id', 'uid'];
export const TEXT_ALIASES = [
  'text', 'feedback', 'feedback_text', 'comment', 'comments', 'content', 'review', 'review_text',
  'message', 'body', 'response', 'verbatim', 'description',
];
export const RATING_ALIASES = ['rating', 'score', 'stars', 'star_rating', 'csat', 'nps', 'nps_score'];
export const CHANNEL_ALIASES = ['channel', 'source', 'platform', 'origin'];
export const DATE_ALIASES = ['date', 'created_at', 'created', 'submitted_at', 'timestamp', 'time', 'submitted'];

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

function normaliseHeader(h: string): string {
  return h.replace(/^\uFEFF/, '').trim().toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '_').replace(/^_|_$/g, '');
}

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

function parseRating(v: string | undefined): number | null {
  if (v === undefined) return null;
  const s = v.trim().replace(',', '.');
  if (s === '') return null;
  const n = Number(s.replace(/\s*\/\s*\d+$/, '')); // "4/5" → 4
  return Number.isFinite(n) ? n : null;
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
  const norm = columns.map(normaliseHeader);
  const data = records.slice(1);
  if (data.length === 0) return { ok: false, error: `the CSV has a header (${columns.join(', ')}) but no data rows` };
  const warnings: string[] = [];

  const idCol = findColumn(norm, ID_ALIASES);
  let textCol = findColumn(norm, TEXT_ALIASES);
  if (textCol < 0) {
    // No known text header: take the column with the longest non-numeric values.
    let bestLen = -1;
    for (let c = 0; c < columns.length; c++) {
      if (c === idCol) continue;
      let len = 0;
      for (const r of data.slice(0, 200)) {
        const v = r[c] ?? '';
        if (v.trim() !== '' && !Number.isFinite(Number(v))) len += v.length;
      }
      if (len > bestLen) {
        bestLen = len;
        textCol = c;
      }
    }
    if (textCol < 0 || bestLen <= 0) {
      return { ok: false, error: `no text column found; expected a header such as ${TEXT_ALIASES.slice(0, 5).join(', ')} (got: ${columns.join(', ')})` };
    }
    warnings.push(`no known text header; using column "${columns[textCol]}" as the feedback text`);
  }
  const ratingCol = findColumn(norm, RATING_ALIASES);
  const channelCol = findColumn(norm, CHANNEL_ALIASES);
  const dateCol = findColumn(norm, DATE_ALIASES);
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
  if (rows.length === 0) return { ok: false, error: `every row's text column "${columns[textCol]}" is empty` };
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
