/** `read_feedback_csv`: parse the run's CSV, write the evidence index, return one bounded page of rows. */
import { z } from 'zod';
import type { ToolDefinition } from '../../../tools/tool.js';
import { errorResult, okResult } from '../../shared/tool-result.js';
import type { FeedbackDataset } from '../feedback-dataset.js';

export const readFeedbackCsvArgs = z.object({
  path: z.string().min(1).max(1000).optional().describe('defaults to the run input csv_path'),
  offset: z.number().int().min(0).optional().describe('first row of the page (0-based), default 0'),
  limit: z.number().int().min(1).max(500).optional().describe('rows per page, default 100, at most 500'),
});
export type ReadFeedbackCsvArgs = z.infer<typeof readFeedbackCsvArgs>;

/** Keeps one page within a model's context whatever the row lengths. */
export const PAGE_CHAR_BUDGET = 60_000;
const ROW_TEXT_MAX = 2_000;

export function createReadFeedbackCsvTool(data: FeedbackDataset, productName: string | undefined): ToolDefinition<ReadFeedbackCsvArgs> {
  return {
    name: 'read_feedback_csv',
    description:
      'Read the feedback CSV (header aliases in English, Chinese, Japanese, Spanish, French, German and Portuguese: ' +
      'id/feedback_id/编号/番号, text/feedback/comment/反馈内容/コメント/comentario…; without a known text header the column of sentences is the text; ' +
      'rating, channel, date optional). Fails, listing the columns found, when no column holds feedback text. ' +
      'Writes runtime/evidence_index.json and returns normalised rows one page at a time (offset/limit; next_offset is null on the last page).',
    parameters: readFeedbackCsvArgs,
    // it only reads: a call a crash cut short is run again
    idempotent: true,
    async execute(args) {
      const loaded = await data.load(args.path ?? data.defaultPath);
      if (!loaded.ok) return errorResult('csv_unreadable', loaded.error, '', loaded.hint);
      const v = loaded.value.facts;
      const offset = args.offset ?? 0;
      const limit = args.limit ?? 100;
      if (offset > v.rows) return errorResult('bad_offset', `offset ${offset} is past the last row (${v.rows} rows)`);
      const page = [];
      let chars = 0;
      for (const r of await data.rows(loaded.value, offset, limit)) {
        const textValue = r.text.length > ROW_TEXT_MAX ? `${r.text.slice(0, ROW_TEXT_MAX)}…` : r.text;
        const row = {
          feedback_id: r.feedback_id,
          row: r.row,
          text: textValue,
          ...(r.text.length > ROW_TEXT_MAX ? { text_truncated: true } : {}),
          rating: r.rating,
          channel: r.channel,
          date: r.date,
          ...(Object.keys(r.extra).length ? { extra: r.extra } : {}),
        };
        const size = JSON.stringify(row).length;
        if (page.length > 0 && chars + size > PAGE_CHAR_BUDGET) break;
        page.push(row);
        chars += size;
      }
      const next = offset + page.length;
      return okResult(
        {
          csv_path: loaded.value.csvPath,
          product_name: productName ?? null,
          encoding: loaded.value.encoding,
          columns: v.columns,
          id_column: v.idColumn,
          text_column: v.textColumn,
          id_source: v.idSource,
          total_rows: v.totalDataRows,
          analysed_rows: v.rows,
          truncated_by_max_rows: v.truncated,
          offset,
          returned: page.length,
          next_offset: next < v.rows ? next : null,
          evidence_index: 'runtime/evidence_index.json',
          warnings: v.warnings,
          // columns a goal may narrow the analysis to (feedback_stats segment)
          segment_columns: data.segmentColumns(loaded.value),
          rows: page,
        },
        { csv_path: loaded.value.csvPath, total_rows: v.totalDataRows, analysed_rows: v.rows, returned: page.length, id_source: v.idSource },
      );
    },
  };
}
