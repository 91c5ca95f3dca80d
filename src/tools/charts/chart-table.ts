/**
 * A checked chart spec reduced to the numbers it shows: row labels × column labels → numbers
 * (summed per group, counted when there is nothing to sum, binned for a histogram). The renderer
 * draws this table and the text under a chart prints it, so the picture and its numbers agree.
 */
import { cellNumber, type ChartCell, type ChartSpec } from './chart-spec.js';

export interface ChartTable {
  /** what the row labels are (the x field; the y field of a heat map) */
  rowTitle: string;
  /** the row labels: bars, points along the line, bins, heat map rows */
  rows: string[];
  /** the column labels: one per series (a single bar series is named by its y title) */
  columns: string[];
  /** cells[r][c]; 0 where no row gave a value */
  cells: number[][];
  /** what the numbers are ("rows" when they count rows) */
  valueTitle: string;
}

const label = (v: ChartCell | undefined): string => (v === null || v === undefined ? '(none)' : String(v));

/** Labels in the order they first appear, those of `order` first. */
function firstSeen(values: string[], order: string[] = []): string[] {
  const seen = new Set<string>(order.filter((o) => values.includes(o)));
  for (const v of values) seen.add(v);
  return [...seen];
}

function grouped(spec: ChartSpec, rowField: string, colField: string | null, valueField: string | null, rowOrder?: string[]): ChartTable {
  const rowKeys = spec.rows.map((r) => label(r[rowField]));
  const colKeys = colField ? spec.rows.map((r) => label(r[colField])) : spec.rows.map(() => '');
  const rows = firstSeen(rowKeys, rowOrder);
  const valueTitle = valueField ? (spec.encoding.value?.title ?? spec.encoding.y?.title ?? valueField) : 'rows';
  const columns = colField ? firstSeen(colKeys, spec.series_order) : [valueTitle];
  const cells = rows.map(() => columns.map(() => 0));
  const rowAt = new Map(rows.map((r, i) => [r, i]));
  const colAt = new Map((colField ? columns : ['']).map((c, i) => [c, i]));
  spec.rows.forEach((r, i) => {
    const add = valueField ? (cellNumber(r[valueField]) ?? 0) : 1;
    cells[rowAt.get(rowKeys[i]) as number][colAt.get(colKeys[i]) as number] += add;
  });
  return { rowTitle: spec.encoding.x.title ?? spec.encoding.x.field, rows, columns, cells, valueTitle };
}

/** "1–2", "2.5–5": a bin's bounds, short. */
const bound = (x: number): string => String(Number(x.toPrecision(4)));

function histogram(spec: ChartSpec): ChartTable {
  const field = spec.encoding.x.field;
  const values = spec.rows.map((r) => cellNumber(r[field])).filter((v): v is number => v !== null);
  const xTitle = spec.encoding.x.title ?? field;
  if (values.length === 0) return { rowTitle: xTitle, rows: [], columns: ['rows'], cells: [], valueTitle: 'rows' };
  let min = values[0];
  let max = values[0];
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  // a few whole numbers (ratings, scores) read best one bar per number
  if (spec.bins === undefined && values.every(Number.isInteger) && max - min < 20) {
    const rows: string[] = [];
    for (let v = min; v <= max; v++) rows.push(String(v));
    const cells = rows.map(() => [0]);
    for (const v of values) cells[v - min][0]++;
    return { rowTitle: xTitle, rows, columns: ['rows'], cells, valueTitle: 'rows' };
  }
  const bins = spec.bins ?? 10;
  const width = max > min ? (max - min) / bins : 1;
  const rows = Array.from({ length: bins }, (_, b) => `${bound(min + b * width)}–${bound(min + (b + 1) * width)}`);
  const cells = rows.map(() => [0]);
  for (const v of values) cells[Math.min(bins - 1, Math.floor((v - min) / width))][0]++;
  return { rowTitle: xTitle, rows, columns: ['rows'], cells, valueTitle: 'rows' };
}

export function chartTable(spec: ChartSpec): ChartTable {
  const e = spec.encoding;
  switch (spec.type) {
    case 'histogram':
      return histogram(spec);
    case 'heatmap': {
      // rows of cells are the y categories, columns the x ones: a theme per line, a segment per column
      const t = grouped(spec, (e.y as { field: string }).field, e.x.field, (e.value as { field: string }).field);
      return { ...t, rowTitle: e.y?.title ?? (e.y as { field: string }).field };
    }
    default:
      return grouped(spec, e.x.field, e.color?.field ?? null, e.y?.field ?? null);
  }
}

/** Counts with thousands separators; other numbers to at most two decimals. */
export function formatNumber(x: number): string {
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(x);
}

const cell = (s: string): string => s.replace(/\s+/g, ' ').replace(/\|/g, '\\|');

/** The table as Markdown: the numbers a chart shows, for readers and screen readers alike. */
export function chartTableMarkdown(spec: ChartSpec, t: ChartTable = chartTable(spec)): string {
  const stacked = spec.type === 'stacked_bar';
  const heat = spec.type === 'heatmap';
  const head = [heat ? `${t.rowTitle} \\ ${spec.encoding.x.title ?? spec.encoding.x.field}` : t.rowTitle, ...t.columns, ...(stacked ? ['total'] : [])];
  const lines = [`| ${head.map(cell).join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  t.rows.forEach((r, i) => {
    const values = t.cells[i].map(formatNumber);
    if (stacked) values.push(formatNumber(t.cells[i].reduce((s, x) => s + x, 0)));
    lines.push(`| ${[r, ...values].map(cell).join(' | ')} |`);
  });
  return lines.join('\n');
}
