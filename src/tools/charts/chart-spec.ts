/**
 * What a chart is drawn from: rows (records) and encodings naming their fields, in the manner of
 * Vega-Lite. The zod schema checks the shape; `checkChartSpec` then checks the spec against its
 * rows (a field that no row has, a value that is not a number), naming the field at fault.
 */
import { z } from 'zod';

export const CHART_TYPES = ['bar', 'stacked_bar', 'line', 'heatmap', 'histogram'] as const;
export type ChartType = (typeof CHART_TYPES)[number];

const cellValue = z.union([z.string().max(500), z.number(), z.boolean(), z.null()]);

const fieldRef = z
  .object({
    field: z.string().min(1).max(100).describe('a key of the rows'),
    title: z.string().max(100).optional().describe('axis or legend title (default: the field)'),
  })
  .strict();

export const chartSpecSchema = z
  .object({
    type: z
      .enum(CHART_TYPES)
      .describe(
        'bar: y per x (summed; row count without y); stacked_bar: y per x stacked by color; line: y over x, one line per color; heatmap: value per (x, y) cell; histogram: rows per bin of the numeric x',
      ),
    title: z.string().min(1).max(200).describe('shown above the chart and as its accessible name'),
    description: z.string().max(1000).optional().describe('one sentence a screen reader says after the title'),
    rows: z.array(z.record(z.string(), cellValue)).min(1).max(10_000).describe('the data, one record per row'),
    encoding: z
      .object({
        x: fieldRef.describe('categories (bar, stacked_bar, heatmap), ordered values (line) or the numbers to bin (histogram)'),
        y: fieldRef.optional().describe('numbers to sum (bar, stacked_bar, line) or the second category (heatmap)'),
        color: fieldRef.optional().describe('series: one stack part (stacked_bar) or one line (line) per value'),
        value: fieldRef.optional().describe('heatmap only: the number of each cell'),
      })
      .strict(),
    horizontal: z.boolean().optional().describe('bar and stacked_bar: categories down the side (long labels read better)'),
    highlight: z
      .object({
        values: z.array(z.string().max(500)).min(1).max(50).describe('x values (bars, heatmap columns) to emphasise'),
        label: z.string().max(100).optional().describe('what the emphasis means, e.g. "the goal\'s segment"'),
      })
      .strict()
      .optional(),
    marker: z
      .object({
        series: z.string().max(500).describe('line: the color value (series) to mark'),
        label: z.string().min(1).max(100).describe('the words at its end, e.g. "growing"'),
      })
      .strict()
      .optional(),
    bins: z.number().int().min(1).max(100).optional().describe('histogram: number of bins (default: one per integer when there are few, else 10)'),
    series_order: z.array(z.string().max(500)).max(50).optional().describe('the order of the color values (default: first seen)'),
    width: z.number().int().min(200).max(2000).optional(),
    height: z.number().int().min(150).max(2000).optional(),
  })
  .strict();

export type ChartSpec = z.infer<typeof chartSpecSchema>;
export type ChartCell = z.infer<typeof cellValue>;

export interface ChartIssue {
  /** the field at fault, as a path ("encoding.y.field", "rows[3].count") */
  path: string;
  message: string;
}

export type ChartSpecCheck = { ok: true; spec: ChartSpec } | { ok: false; issues: ChartIssue[] };

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)), '');

/** A number a cell holds, or null when it holds none (numeric strings count: CSV values are text). */
export function cellNumber(v: ChartCell | undefined): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** The spec's shape and its fit to its rows, every problem named by its field. */
export function checkChartSpec(input: unknown): ChartSpecCheck {
  const parsed = chartSpecSchema.safeParse(input);
  if (!parsed.success) return { ok: false, issues: parsed.error.issues.map((i) => ({ path: pathText(i.path) || '(spec)', message: i.message })) };
  const spec = parsed.data;
  const issues: ChartIssue[] = [];
  const e = spec.encoding;
  const need = (key: 'y' | 'color' | 'value', why: string): void => {
    if (!e[key]) issues.push({ path: `encoding.${key}`, message: `required for a ${spec.type} chart (${why})` });
  };
  const forbid = (key: 'y' | 'color' | 'value'): void => {
    if (e[key]) issues.push({ path: `encoding.${key}`, message: `not used by a ${spec.type} chart; remove it` });
  };
  switch (spec.type) {
    case 'bar':
      forbid('value');
      break;
    case 'stacked_bar':
      need('color', 'the parts of each bar');
      forbid('value');
      break;
    case 'line':
      need('y', 'the numbers the line joins');
      forbid('value');
      break;
    case 'heatmap':
      need('y', 'the rows of cells');
      need('value', 'the number in each cell');
      forbid('color');
      break;
    case 'histogram':
      forbid('y');
      forbid('color');
      forbid('value');
      break;
  }
  if (spec.marker && spec.type !== 'line') issues.push({ path: 'marker', message: 'only a line chart marks a series' });
  if (spec.bins !== undefined && spec.type !== 'histogram') issues.push({ path: 'bins', message: 'only a histogram has bins' });
  if (spec.horizontal && spec.type !== 'bar' && spec.type !== 'stacked_bar') issues.push({ path: 'horizontal', message: 'only bar charts lie on their side' });
  // every named field is a key of some row; numeric fields hold numbers
  const numeric = new Set<string>(
    [spec.type === 'heatmap' ? undefined : e.y?.field, e.value?.field, spec.type === 'histogram' ? e.x.field : undefined].filter(
      (f): f is string => f !== undefined,
    ),
  );
  for (const [key, ref] of Object.entries(e) as Array<[string, { field: string } | undefined]>) {
    if (!ref) continue;
    if (!spec.rows.some((r) => ref.field in r)) {
      const columns = [...new Set(spec.rows.slice(0, 50).flatMap((r) => Object.keys(r)))];
      issues.push({ path: `encoding.${key}.field`, message: `"${ref.field}" is not a field of the rows (they have: ${columns.join(', ') || 'no fields'})` });
      continue;
    }
    if (!numeric.has(ref.field)) continue;
    const bad = spec.rows.findIndex((r) => r[ref.field] !== null && r[ref.field] !== undefined && cellNumber(r[ref.field]) === null);
    if (bad >= 0)
      issues.push({
        path: `rows[${bad}].${ref.field}`,
        message: `${JSON.stringify(spec.rows[bad][ref.field])} is not a number (encoding.${key} sums or bins numbers)`,
      });
  }
  if (spec.marker && e.color && !spec.rows.some((r) => String(r[e.color?.field ?? ''] ?? '') === spec.marker?.series))
    issues.push({ path: 'marker.series', message: `"${spec.marker.series}" is not a value of ${e.color.field}` });
  return issues.length ? { ok: false, issues } : { ok: true, spec };
}
