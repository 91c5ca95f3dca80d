/**
 * `write_chart { path, chart }`: draws a chart spec (bar, stacked bar, line, heat map, histogram
 * from rows and encodings) with the server-side renderer and writes the SVG under artifacts/, the
 * way write_artifact writes a file. A spec that does not fit its rows is refused, the field named;
 * the result carries the numbers drawn as a Markdown table to put under the picture.
 */
import { z } from 'zod';
import { chartSpecSchema } from './charts/chart-spec.js';
import { chartTableMarkdown } from './charts/chart-table.js';
import { renderChart } from './charts/render-chart.js';
import type { FileAccess } from './file-access.js';
import type { ToolDefinition } from './tool.js';
import { errorResult, okResult } from './tool-result.js';

export const writeChartArgs = z.object({
  path: z
    .string()
    .min(1)
    .max(300)
    .regex(/\.svg$/i, 'must end in .svg')
    .describe('where under artifacts/, ending in .svg, e.g. charts/themes.svg'),
  chart: chartSpecSchema,
});
export type WriteChartArgs = z.infer<typeof writeChartArgs>;

export function createWriteChartTool(o: { workspace: Pick<FileAccess, 'writeArtifact'> }): ToolDefinition<WriteChartArgs> {
  return {
    name: 'write_chart',
    description:
      'Draw a chart as an SVG artifact: type bar | stacked_bar | line | heatmap | histogram, rows (records) and encoding {x, y, color, value} naming their fields. ' +
      'Returns the path and the numbers drawn as a Markdown table; embed it in a report as ![title](path) followed by that table.',
    parameters: writeChartArgs,
    // the same spec draws the same bytes: a call cut short is drawn again
    idempotent: true,
    async execute(args) {
      const drawn = renderChart(args.chart);
      if (!drawn.ok) {
        const lines = drawn.issues.map((i) => `chart.${i.path}: ${i.message}`);
        return errorResult(
          'bad_chart',
          `chart not drawn: ${lines[0]}${lines.length > 1 ? ` (and ${lines.length - 1} more)` : ''}; nothing was written`,
          lines.join('\n'),
          'fix the named fields and call write_chart again',
          { issues: lines },
        );
      }
      let written: { path: string; bytes: number };
      try {
        written = await o.workspace.writeArtifact(args.path, drawn.chart.svg);
      } catch (e) {
        return errorResult('write_refused', `cannot write ${args.path}: ${(e as Error).message}`);
      }
      return okResult({ path: written.path, bytes: written.bytes, numbers: chartTableMarkdown(args.chart, drawn.chart.table) });
    },
  };
}
