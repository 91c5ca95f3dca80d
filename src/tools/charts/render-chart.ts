/**
 * A chart spec drawn as an SVG document on the server, with no browser: Apache ECharts' server-side
 * SVG renderer (`ssr: true`, `renderToSVGString`). The output is the same bytes for the same spec
 * (no animation, no clock; ECharts' per-instance id prefix is replaced by one derived from the
 * spec), and it says what it is: `role="img"`, a `<title>` and a `<desc>` with the numbers.
 */
import { createHash } from 'node:crypto';
import { BarChart, HeatmapChart, LineChart } from 'echarts/charts';
import { AriaComponent, GridComponent, LegendComponent, MarkPointComponent, TitleComponent, VisualMapComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { checkChartSpec, type ChartIssue, type ChartSpec } from './chart-spec.js';
import { chartTable, formatNumber, type ChartTable } from './chart-table.js';
import { AXIS_COLOUR, BAR_COLOUR, FONT_FAMILY, HEAT_RAMP, HIGHLIGHT_COLOUR, SERIES_COLOURS, TEXT_COLOUR } from './chart-palette.js';

echarts.use([
  BarChart,
  LineChart,
  HeatmapChart,
  GridComponent,
  TitleComponent,
  LegendComponent,
  VisualMapComponent,
  MarkPointComponent,
  AriaComponent,
  SVGRenderer,
]);

export interface RenderedChart {
  svg: string;
  /** the numbers drawn, for the text that goes with the picture */
  table: ChartTable;
  width: number;
  height: number;
}

export type RenderOutcome = { ok: true; chart: RenderedChart } | { ok: false; issues: ChartIssue[] };

const LINE_DASHES = ['solid', 'dashed', 'dotted'] as const;
const LINE_SYMBOLS = ['circle', 'rect', 'triangle', 'diamond', 'emptyCircle', 'emptyRect'];

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Rough width of a label in pixels at 12px (CJK glyphs are square), for the space beside the bars. */
function labelWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += /[\u1100-\uffff]/u.test(ch) ? 12 : 7;
  return w;
}

const typeName: Record<ChartSpec['type'], string> = {
  bar: 'Bar chart',
  stacked_bar: 'Stacked bar chart',
  line: 'Line chart',
  heatmap: 'Heat map',
  histogram: 'Histogram',
};

/** The description a screen reader says: the spec's own, then the numbers (cut short on big tables). */
function describe(spec: ChartSpec, t: ChartTable): string {
  const parts: string[] = [];
  const limit = 40;
  t.rows.slice(0, limit).forEach((r, i) => {
    const cells = t.columns.length === 1 ? formatNumber(t.cells[i][0]) : t.columns.map((c, k) => `${c} ${formatNumber(t.cells[i][k])}`).join(', ');
    parts.push(`${r}: ${cells}`);
  });
  const more = t.rows.length > limit ? `; and ${t.rows.length - limit} more` : '';
  const what = `${typeName[spec.type]} of ${t.valueTitle} by ${t.rowTitle}`;
  return `${spec.description ? `${spec.description} ` : ''}${what}. ${parts.join('; ')}${more}.`;
}

function baseOption(spec: ChartSpec, subtitle: string): Record<string, unknown> {
  return {
    animation: false,
    backgroundColor: '#ffffff',
    textStyle: { fontFamily: FONT_FAMILY, color: TEXT_COLOUR },
    title: {
      text: spec.title,
      subtext: subtitle,
      left: 8,
      top: 6,
      textStyle: { fontSize: 15, fontWeight: 'bold', color: TEXT_COLOUR, fontFamily: FONT_FAMILY },
      subtextStyle: { fontSize: 12, color: AXIS_COLOUR, fontFamily: FONT_FAMILY },
    },
    // patterns on bars, so series differ in grey too
    aria: { enabled: true, decal: { show: true } },
  };
}

const axisText = { color: AXIS_COLOUR, fontFamily: FONT_FAMILY, fontSize: 12 };

/** Category labels, the highlighted ones bold with a marker. */
function categoryLabels(names: string[], highlighted: Set<string>): Record<string, unknown> {
  return {
    ...axisText,
    interval: 0,
    formatter: (v: string) => (highlighted.has(v) ? `{hl|▶ ${v}}` : v),
    rich: { hl: { fontWeight: 'bold', color: '#000000', fontFamily: FONT_FAMILY, fontSize: 12 } },
    ...(names.length > 8 ? { rotate: 30 } : {}),
  };
}

function barOption(spec: ChartSpec, t: ChartTable, highlighted: Set<string>, layout: Layout): Record<string, unknown> {
  const horizontal = spec.horizontal === true;
  const stacked = spec.type === 'stacked_bar';
  const single = t.columns.length === 1;
  const categoryAxis = {
    type: 'category',
    data: t.rows,
    name: horizontal ? '' : t.rowTitle,
    nameLocation: 'middle',
    nameGap: 28,
    nameTextStyle: axisText,
    axisLabel: horizontal
      ? { ...categoryLabels(t.rows, highlighted), rotate: 0, width: layout.labelRoom, overflow: 'break' }
      : categoryLabels(t.rows, highlighted),
    axisLine: { lineStyle: { color: AXIS_COLOUR } },
    axisTick: { alignWithLabel: true },
    ...(horizontal ? { inverse: true } : {}),
  };
  const valueAxis = {
    type: 'value',
    name: t.valueTitle,
    nameLocation: 'middle',
    nameGap: horizontal ? 26 : 40,
    nameTextStyle: axisText,
    axisLabel: { ...axisText, formatter: (v: number) => formatNumber(v) },
    splitLine: { lineStyle: { color: '#e6e6e6' } },
    minInterval: 1,
  };
  const series = t.columns.map((name, c) => ({
    type: 'bar',
    name,
    ...(stacked ? { stack: 'total' } : {}),
    ...(spec.type === 'histogram' ? { barCategoryGap: '4%' } : {}),
    itemStyle: { color: single ? BAR_COLOUR : SERIES_COLOURS[c % SERIES_COLOURS.length], borderColor: '#ffffff', borderWidth: stacked ? 1 : 0 },
    label: {
      show: true,
      position: stacked ? 'inside' : horizontal ? 'right' : 'top',
      fontFamily: FONT_FAMILY,
      fontSize: 11,
      color: stacked ? (c === 0 || c === 3 ? '#ffffff' : TEXT_COLOUR) : TEXT_COLOUR,
      formatter: (p: { value: number }) => (p.value ? formatNumber(p.value) : ''),
    },
    data: t.cells.map((row, r) =>
      highlighted.has(t.rows[r])
        ? {
            value: row[c],
            itemStyle: { ...(single ? { color: HIGHLIGHT_COLOUR } : {}), borderColor: '#000000', borderWidth: 2 },
          }
        : row[c],
    ),
  }));
  return {
    grid: layout.grid,
    ...(horizontal ? { yAxis: categoryAxis, xAxis: valueAxis } : { xAxis: categoryAxis, yAxis: valueAxis }),
    ...(single ? {} : legend(t.columns)),
    series,
  };
}

function legend(names: string[]): Record<string, unknown> {
  return { legend: { data: names, top: 52, left: 8, textStyle: axisText, itemWidth: 18, itemHeight: 12 } };
}

function lineOption(spec: ChartSpec, t: ChartTable, layout: Layout): Record<string, unknown> {
  const marked = spec.marker?.series;
  const series = t.columns.map((name, c) => {
    const isMarked = name === marked;
    const last = t.rows.length - 1;
    return {
      type: 'line',
      name,
      data: t.cells.map((row) => row[c]),
      symbol: LINE_SYMBOLS[c % LINE_SYMBOLS.length],
      symbolSize: isMarked ? 9 : 6,
      itemStyle: { color: isMarked ? HIGHLIGHT_COLOUR : SERIES_COLOURS[c % SERIES_COLOURS.length] },
      lineStyle: {
        width: isMarked ? 4 : 2,
        type: isMarked ? 'solid' : LINE_DASHES[c % LINE_DASHES.length],
        color: isMarked ? HIGHLIGHT_COLOUR : SERIES_COLOURS[c % SERIES_COLOURS.length],
      },
      ...(isMarked && last >= 0
        ? {
            markPoint: {
              symbol: 'pin',
              symbolSize: 44,
              itemStyle: { color: HIGHLIGHT_COLOUR },
              label: { show: true, color: '#ffffff', fontFamily: FONT_FAMILY, fontSize: 10, formatter: '▲' },
              data: [{ coord: [last, t.cells[last][c]], name: spec.marker?.label ?? '' }],
            },
            endLabel: { show: true, formatter: `${name}: ${spec.marker?.label ?? ''}`, fontFamily: FONT_FAMILY, fontWeight: 'bold', color: '#000000' },
          }
        : {}),
    };
  });
  return {
    grid: layout.grid,
    xAxis: {
      type: 'category',
      data: t.rows,
      name: t.rowTitle,
      nameLocation: 'middle',
      nameGap: 28,
      nameTextStyle: axisText,
      boundaryGap: false,
      axisLabel: categoryLabels(t.rows, new Set()),
      axisLine: { lineStyle: { color: AXIS_COLOUR } },
    },
    yAxis: {
      type: 'value',
      name: t.valueTitle,
      nameLocation: 'middle',
      nameGap: 40,
      nameTextStyle: axisText,
      axisLabel: { ...axisText, formatter: (v: number) => formatNumber(v) },
      splitLine: { lineStyle: { color: '#e6e6e6' } },
      minInterval: 1,
    },
    ...legend(t.columns),
    series,
  };
}

function heatmapOption(spec: ChartSpec, t: ChartTable, highlighted: Set<string>, layout: Layout): Record<string, unknown> {
  let max = 0;
  for (const row of t.cells) for (const v of row) if (v > max) max = v;
  const data = t.cells.flatMap((row, r) =>
    row.map((v, c) => {
      const hl = highlighted.has(t.columns[c]);
      return {
        value: [c, r, v],
        label: { color: v > max * 0.5 ? '#ffffff' : TEXT_COLOUR, fontWeight: hl ? 'bold' : 'normal' },
        itemStyle: hl ? { borderColor: '#000000', borderWidth: 2 } : { borderColor: '#ffffff', borderWidth: 1 },
      };
    }),
  );
  return {
    grid: layout.grid,
    xAxis: {
      type: 'category',
      data: t.columns,
      name: spec.encoding.x.title ?? spec.encoding.x.field,
      nameLocation: 'middle',
      nameGap: 28,
      nameTextStyle: axisText,
      position: 'bottom',
      axisLabel: categoryLabels(t.columns, highlighted),
      splitArea: { show: false },
    },
    yAxis: {
      type: 'category',
      data: t.rows,
      inverse: true,
      axisLabel: { ...axisText, interval: 0, width: layout.labelRoom, overflow: 'break' },
    },
    visualMap: {
      min: 0,
      max: Math.max(1, max),
      calculable: false,
      orient: 'horizontal',
      right: 12,
      top: 8,
      itemWidth: 12,
      itemHeight: 100,
      text: [formatNumber(Math.max(1, max)), '0'],
      textStyle: axisText,
      inRange: { color: HEAT_RAMP },
    },
    series: [
      {
        type: 'heatmap',
        name: t.valueTitle,
        data,
        label: { show: true, fontFamily: FONT_FAMILY, fontSize: 11, formatter: (p: { value: number[] }) => formatNumber(p.value[2]) },
      },
    ],
  };
}

interface Layout {
  width: number;
  height: number;
  labelRoom: number;
  grid: Record<string, unknown>;
}

function layoutOf(spec: ChartSpec, t: ChartTable): Layout {
  const width = spec.width ?? 720;
  const top = t.columns.length > 1 && spec.type !== 'heatmap' ? 90 : 70;
  const sideLabels = spec.type === 'heatmap' || spec.horizontal === true;
  const longest = Math.max(0, ...t.rows.map(labelWidth));
  const labelRoom = sideLabels ? Math.min(Math.round(width * 0.35), Math.max(60, longest + 8)) : 0;
  const perRow = spec.type === 'heatmap' ? 34 : 30;
  const height = spec.height ?? (sideLabels ? Math.max(220, top + 50 + t.rows.length * perRow) : 380);
  const rotated = !sideLabels && t.rows.length > 8;
  return {
    width,
    height,
    labelRoom,
    grid: {
      left: sideLabels ? labelRoom + 16 : 64,
      // room for the marked line's end label
      right: spec.type === 'line' && spec.marker ? Math.min(width / 3, labelWidth(`${spec.marker.series}: ${spec.marker.label}`) + 24) : 32,
      top,
      bottom: rotated ? 90 : 50,
    },
  };
}

function optionFor(spec: ChartSpec, t: ChartTable, layout: Layout): Record<string, unknown> {
  const highlighted = new Set(spec.highlight?.values ?? []);
  const notes: string[] = [];
  if (spec.highlight) notes.push(`Bold, outlined: ${spec.highlight.values.join(', ')}${spec.highlight.label ? ` (${spec.highlight.label})` : ''}`);
  if (spec.marker) notes.push(`▲ ${spec.marker.series}: ${spec.marker.label}`);
  const base = baseOption(spec, notes.join(' · '));
  switch (spec.type) {
    case 'line':
      return { ...base, ...lineOption(spec, t, layout) };
    case 'heatmap':
      return { ...base, ...heatmapOption(spec, t, highlighted, layout) };
    default:
      return { ...base, ...barOption(spec, t, highlighted, layout) };
  }
}

/** The root element made accessible and the instance ids made the spec's own. */
function finishSvg(raw: string, spec: ChartSpec, t: ChartTable): string {
  const id = `rt${createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 10)}`;
  const title = `<title id="${id}-title">${escapeXml(spec.title)}</title>`;
  const desc = `<desc id="${id}-desc">${escapeXml(describe(spec, t))}</desc>`;
  // ECharts numbers instances, classes and patterns with process-wide counters: renumber them in
  // the order they appear, so the second drawing of a spec is the first's bytes
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  const renumbered = raw.replace(/\bzr\d+-([a-z]+-?)(\d+)/g, (whole, kind: string) => {
    let to = seen.get(whole);
    if (to === undefined) {
      const n = counts.get(kind) ?? 0;
      counts.set(kind, n + 1);
      seen.set(whole, (to = `${id}-${kind}${n}`));
    }
    return to;
  });
  return `${renumbered
    .replace(/^<svg /, `<svg role="img" aria-labelledby="${id}-title" aria-describedby="${id}-desc" `)
    .replace(/^(<svg[^>]*>)/, `$1${title}${desc}`)}\n`;
}

/** Checks the spec, then draws it. */
export function renderChart(input: unknown): RenderOutcome {
  const checked = checkChartSpec(input);
  if (!checked.ok) return checked;
  const spec = checked.spec;
  const table = chartTable(spec);
  const layout = layoutOf(spec, table);
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: layout.width, height: layout.height });
  try {
    chart.setOption(optionFor(spec, table, layout));
    const svg = finishSvg(chart.renderToSVGString(), spec, table);
    return { ok: true, chart: { svg, table, width: layout.width, height: layout.height } };
  } finally {
    chart.dispose();
  }
}
