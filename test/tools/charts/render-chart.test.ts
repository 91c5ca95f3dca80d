import { describe, expect, it } from 'vitest';
import { checkChartSpec } from '../../../src/tools/charts/chart-spec.js';
import { chartTableMarkdown } from '../../../src/tools/charts/chart-table.js';
import { renderChart } from '../../../src/tools/charts/render-chart.js';
import { parseSvg } from './svg-marks.js';

const themes = [
  { theme: '同步冲突', rows: 35 },
  { theme: 'Exportación falla', rows: 25 },
  { theme: 'Too expensive', rows: 12 },
];

function draw(spec: unknown): string {
  const r = renderChart(spec);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.chart.svg;
}

describe('renderChart', () => {
  it('draws one bar per theme with its count, CJK and accented labels as text, and says what it is', () => {
    const svg = draw({ type: 'bar', title: 'Themes by size', horizontal: true, rows: themes, encoding: { x: { field: 'theme' }, y: { field: 'rows' } } });
    const p = parseSvg(svg);
    expect(p.root.role).toBe('img');
    expect(p.root['aria-labelledby']).toMatch(/-title$/);
    expect(p.title).toBe('Themes by size');
    expect(p.desc).toContain('同步冲突: 35');
    expect(p.marks.map((m) => m.index)).toEqual([0, 1, 2]);
    for (const t of themes) {
      expect(p.texts).toContain(t.theme);
      expect(p.texts).toContain(String(t.rows));
    }
  });

  it('is byte-identical for the same spec, drawn again after other charts', () => {
    const spec = {
      type: 'stacked_bar',
      title: 'Sentiment',
      rows: themes.map((t) => ({ ...t, s: 'negative' })),
      encoding: { x: { field: 'theme' }, y: { field: 'rows' }, color: { field: 's' } },
    };
    const first = draw(spec);
    draw({ type: 'histogram', title: 'Ratings', rows: [{ r: 1 }, { r: 5 }], encoding: { x: { field: 'r' } } });
    expect(draw(spec)).toBe(first);
    expect(first).not.toMatch(/zr\d+-/);
  });

  it('sums y per x and stack, counts rows without y, and bins a histogram one bar per whole number', () => {
    const rows = [
      { t: 'Sync', s: 'negative', n: 2 },
      { t: 'Sync', s: 'negative', n: 3 },
      { t: 'Sync', s: 'positive', n: 1 },
      { t: 'Price', s: 'positive', n: 4 },
    ];
    const r = renderChart({ type: 'stacked_bar', title: 'x', rows, encoding: { x: { field: 't' }, y: { field: 'n' }, color: { field: 's' } } });
    expect(r.ok && r.chart.table.cells).toEqual([
      [5, 1],
      [0, 4],
    ]);
    const counted = renderChart({ type: 'bar', title: 'x', rows, encoding: { x: { field: 't' } } });
    expect(counted.ok && counted.chart.table.cells).toEqual([[3], [1]]);
    const h = renderChart({ type: 'histogram', title: 'Ratings', rows: [1, 1, 3, 5].map((r) => ({ r })), encoding: { x: { field: 'r' } } });
    expect(h.ok && h.chart.table.rows).toEqual(['1', '2', '3', '4', '5']);
    expect(h.ok && h.chart.table.cells.map((c) => c[0])).toEqual([2, 0, 1, 0, 1]);
    if (!h.ok) return;
    expect(
      chartTableMarkdown(
        checkSpec({ type: 'histogram', title: 'Ratings', rows: [1, 1, 3, 5].map((r) => ({ r })), encoding: { x: { field: 'r' } } }),
        h.chart.table,
      ),
    ).toContain('| 1 | 2 |');
  });

  it('draws a heat map cell per theme and segment, the highlighted segment outlined, and a line with its marked series', () => {
    const rows = themes.flatMap((t) => ['iOS', 'Android'].map((p, k) => ({ theme: t.theme, platform: p, rows: t.rows - k * 5 })));
    const heat = parseSvg(
      draw({
        type: 'heatmap',
        title: 'Themes by platform',
        rows,
        encoding: { x: { field: 'platform' }, y: { field: 'theme' }, value: { field: 'rows' } },
        highlight: { values: ['iOS'], label: "the goal's segment" },
      }),
    );
    expect(heat.marks).toHaveLength(6);
    expect(heat.texts.some((t) => t.includes('iOS'))).toBe(true);
    expect(heat.texts.join(' ')).toContain("the goal's segment");
    const line = parseSvg(
      draw({
        type: 'line',
        title: 'Per week',
        rows: [1, 2, 3].flatMap((w) => [
          { week: `W${w}`, s: 'all', n: 10 },
          { week: `W${w}`, s: 'Sync', n: w * 3 },
        ]),
        encoding: { x: { field: 'week' }, y: { field: 'n' }, color: { field: 's' } },
        marker: { series: 'Sync', label: 'growing' },
      }),
    );
    expect(line.texts.join(' ')).toContain('Sync: growing');
  });

  it.each([
    [{ type: 'pie', title: 't', rows: [{ a: 1 }], encoding: { x: { field: 'a' } } }, 'type'],
    [{ type: 'bar', title: '', rows: [{ a: 1 }], encoding: { x: { field: 'a' } } }, 'title'],
    [{ type: 'bar', title: 't', rows: [], encoding: { x: { field: 'a' } } }, 'rows'],
    [{ type: 'bar', title: 't', rows: [{ a: 1 }], encoding: { x: { field: 'theme' } } }, 'encoding.x.field'],
    [{ type: 'bar', title: 't', rows: [{ a: 'x', n: 'many' }], encoding: { x: { field: 'a' }, y: { field: 'n' } } }, 'rows[0].n'],
    [{ type: 'stacked_bar', title: 't', rows: [{ a: 'x', n: 1 }], encoding: { x: { field: 'a' }, y: { field: 'n' } } }, 'encoding.color'],
    [{ type: 'heatmap', title: 't', rows: [{ a: 'x', b: 'y' }], encoding: { x: { field: 'a' }, y: { field: 'b' } } }, 'encoding.value'],
    [{ type: 'histogram', title: 't', rows: [{ r: 'five' }], encoding: { x: { field: 'r' } } }, 'rows[0].r'],
    [{ type: 'bar', title: 't', rows: [{ a: 1 }], encoding: { x: { field: 'a' } }, marker: { series: 'a', label: 'b' } }, 'marker'],
    [
      {
        type: 'line',
        title: 't',
        rows: [{ a: 1, n: 2, s: 'x' }],
        encoding: { x: { field: 'a' }, y: { field: 'n' }, color: { field: 's' } },
        marker: { series: 'q', label: 'up' },
      },
      'marker.series',
    ],
  ])('refuses a bad spec naming the field (%#)', (spec, path) => {
    const r = renderChart(spec);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toContain(path);
  });
});

function checkSpec(spec: unknown) {
  const c = checkChartSpec(spec);
  if (!c.ok) throw new Error('bad spec');
  return c.spec;
}
