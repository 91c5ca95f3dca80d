import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSchema } from '../../src/tools/schema.js';
import { createWriteChartTool, writeChartArgs } from '../../src/tools/write-chart-tool.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workspace() {
  const root = mkdtempSync(join(tmpdir(), 'rt-chart-'));
  dirs.push(root);
  return {
    root,
    async writeArtifact(rel: string, content: string | Uint8Array) {
      if (rel.includes('..')) throw new Error(`${rel} is outside artifacts/`);
      const p = join(root, 'artifacts', rel);
      await mkdir(dirname(p), { recursive: true });
      await writeFile(p, content);
      return { path: rel, bytes: Buffer.byteLength(content) };
    },
  };
}

const good = {
  path: 'charts/themes.svg',
  chart: {
    type: 'bar',
    title: 'Themes',
    rows: [
      { theme: '同步', n: 3 },
      { theme: 'Precio', n: 1 },
    ],
    encoding: { x: { field: 'theme' }, y: { field: 'n' } },
  },
};

describe('write_chart', () => {
  it('writes the SVG under artifacts/ and returns the numbers drawn', async () => {
    const ws = workspace();
    const tool = createWriteChartTool({ workspace: ws });
    const r = await tool.execute(writeChartArgs.parse(good));
    expect(r.ok).toBe(true);
    const out = JSON.parse(r.content);
    expect(out.path).toBe('charts/themes.svg');
    expect(out.numbers).toContain('| 同步 | 3 |');
    expect(readFileSync(join(ws.root, 'artifacts/charts/themes.svg'), 'utf8')).toMatch(/^<svg role="img"/);
  });

  it('refuses a spec that does not fit its rows, naming the field, and writes nothing', async () => {
    const ws = workspace();
    const tool = createWriteChartTool({ workspace: ws });
    const bad = { ...good, chart: { ...good.chart, encoding: { x: { field: 'theme' }, y: { field: 'count' } } } };
    const r = await tool.execute(writeChartArgs.parse(bad));
    expect(r.ok).toBe(false);
    expect(JSON.parse(r.content).error).toContain('chart.encoding.y.field: "count" is not a field of the rows (they have: theme, n)');
    expect(() => readFileSync(join(ws.root, 'artifacts/charts/themes.svg'))).toThrow();
  });

  it('names the field of a spec whose shape is wrong (the executor checks arguments against this schema)', () => {
    const r = checkSchema(writeChartArgs, { path: 'x.png', chart: { ...good.chart, type: 'donut' } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path.join('.'))).toEqual(expect.arrayContaining(['path', 'chart.type']));
  });

  it('reports a path the workspace refuses', async () => {
    const tool = createWriteChartTool({ workspace: workspace() });
    const r = await tool.execute(writeChartArgs.parse({ ...good, path: '../escape.svg' }));
    expect(r.ok).toBe(false);
    expect(JSON.parse(r.content).error).toContain('cannot write ../escape.svg');
  });
});
