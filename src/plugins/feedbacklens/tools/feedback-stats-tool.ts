/** `feedback_stats`: counts, ratings, sentiment and clustered themes with priorities over all rows. */
import { z } from 'zod';
import type { ToolDefinition } from '../../../tools/tool.js';
import { errorResult, okResult } from '../../shared/tool-result.js';
import type { FeedbackDataset } from '../feedback-dataset.js';

export const feedbackStatsArgs = z.object({
  max_themes: z.number().int().min(1).max(8).optional().describe('themes to return, most urgent first (default 8)'),
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
    async execute(args, ctx) {
      const loaded = await data.load();
      if (!loaded.ok) return errorResult('csv_unreadable', loaded.error, '', loaded.hint);
      const v = loaded.value.facts;
      ctx?.reporter?.stage('analyse', `analysing ${v.rows} rows`);
      const stats = await data.analyse(loaded.value, (stage, current, total, message) => ctx?.reporter?.progress({ stage, current, total, message }));
      return okResult({
        csv_path: loaded.value.csvPath,
        total_rows: v.totalDataRows,
        id_source: v.idSource,
        ...stats,
        themes: stats.themes.slice(0, args.max_themes ?? 8),
      });
    },
  };
}
