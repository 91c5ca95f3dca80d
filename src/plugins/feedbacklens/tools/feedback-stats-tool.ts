/** `feedback_stats`: counts, ratings, sentiment and clustered themes with priorities over all rows. */
import { z } from 'zod';
import type { ToolDefinition } from '../../../tools/tool.js';
import { errorResult, okResult } from '../../shared/tool-result.js';
import type { FeedbackDataset } from '../feedback-dataset.js';

export const feedbackStatsArgs = z.object({
  max_themes: z.number().int().min(1).max(8).optional().describe('themes to return, most urgent first (default 8)'),
  segment: z
    .object({ column: z.string().min(1), values: z.array(z.string().min(1)).min(1) })
    .optional()
    .describe('analyse only the rows whose column has one of these values (a segment the goal names; read_feedback_csv lists segment_columns)'),
});
export type FeedbackStatsArgs = z.infer<typeof feedbackStatsArgs>;

export function createFeedbackStatsTool(data: FeedbackDataset): ToolDefinition<FeedbackStatsArgs> {
  return {
    name: 'feedback_stats',
    description:
      'Statistics over every analysed row: the language of the rows, rating distribution, channels, date range, sentiment counts ' +
      '(AFINN for English, a packaged lexicon with negation for other languages, blended with ratings), top terms, ' +
      'and themes found by term clustering, each with mention_count, sentiment, severity (from negative sentiment and low ratings), ' +
      'priority (frequency × severity) and representative feedback_ids.',
    parameters: feedbackStatsArgs,
    // it only reads: a call a crash cut short is run again
    idempotent: true,
    async execute(args, ctx) {
      const loaded = await data.load();
      if (!loaded.ok) return errorResult('csv_unreadable', loaded.error, '', loaded.hint);
      const v = loaded.value.facts;
      if (args.segment) {
        const columns = data.segmentColumns(loaded.value);
        const col = columns.find((c) => c.column === args.segment?.column);
        if (!col)
          return errorResult(
            'bad_segment',
            `segment.column: "${args.segment.column}" is not a segment column of this file (${columns.map((c) => c.column).join(', ') || 'it has none'})`,
          );
        const unknown = args.segment.values.filter((x) => !(x in col.values));
        if (unknown.length)
          return errorResult(
            'bad_segment',
            `segment.values: ${unknown.map((x) => JSON.stringify(x)).join(', ')} not in ${col.column} (${Object.keys(col.values).join(', ')})`,
          );
      }
      ctx?.reporter?.stage('analyse', `analysing ${v.rows === 1 ? '1 row' : `${v.rows} rows`}`);
      const stats = await data.analyse(
        loaded.value,
        (stage, current, total, message) => ctx?.reporter?.progress({ stage, current, total, message }),
        args.segment,
      );
      const shown = stats.themes.slice(0, args.max_themes ?? 8);
      const leftOff = stats.themes.slice(shown.length);
      return okResult({
        csv_path: loaded.value.csvPath,
        total_rows: v.totalDataRows,
        id_source: v.idSource,
        ...stats,
        themes: shown,
        // the smaller themes past max_themes, said rather than dropped, so the rows still add up
        ...(leftOff.length > 0 ? { themes_left_off: { themes: leftOff.length, rows: leftOff.reduce((n, t) => n + t.mention_count, 0) } } : {}),
      });
    },
  };
}
