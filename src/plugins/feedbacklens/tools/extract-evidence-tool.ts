/** `extract_evidence`: verbatim quotes from named rows, or rows found by terms. */
import { z } from 'zod';
import type { ToolDefinition } from '../../../tools/tool.js';
import { errorResult, okResult } from '../../shared/tool-result.js';
import { scoreSentiment } from '../analysis/sentiment-score.js';
import { selectQuote } from '../analysis/select-quote.js';
import { contentTokens } from '../../shared/tokenize.js';
import type { FeedbackRow } from '../analysis/feedback-row.js';
import type { FeedbackDataset } from '../feedback-dataset.js';

export const extractEvidenceArgs = z
  .object({
    feedback_ids: z.array(z.string().min(1).max(200)).max(100).optional().describe('rows to quote'),
    terms: z.array(z.string().min(1).max(100)).max(20).optional().describe('words or phrases the quote should carry; alone, they find rows'),
    limit: z.number().int().min(1).max(50).optional().describe('rows returned when searching by terms (default 10)'),
  })
  .refine((a) => (a.feedback_ids?.length ?? 0) > 0 || (a.terms?.length ?? 0) > 0, { message: 'give feedback_ids or terms (or both)' });
export type ExtractEvidenceArgs = z.infer<typeof extractEvidenceArgs>;

function stemsOf(terms: string[], lang: string): string[] {
  return terms.flatMap((t) => contentTokens(t, lang).map((x) => x.stem));
}

export function createExtractEvidenceTool(data: FeedbackDataset): ToolDefinition<ExtractEvidenceArgs> {
  return {
    name: 'extract_evidence',
    description:
      'Return verbatim quotes (evidence_text) for feedback rows: by feedback_ids, or by searching terms. ' +
      'Each quote is an exact part of the row text, so it passes the evidence check.',
    parameters: extractEvidenceArgs,
    // it only reads: a call a crash cut short is run again
    idempotent: true,
    async execute(args) {
      const loaded = await data.load();
      if (!loaded.ok) return errorResult('csv_unreadable', loaded.error, '', loaded.hint);
      const lang = loaded.value.language.code;
      const stems = stemsOf(args.terms ?? [], lang);
      const unknown: string[] = [];
      let rows: FeedbackRow[] = [];
      if (args.feedback_ids?.length) {
        const found = await data.byIds(loaded.value, args.feedback_ids);
        for (const id of args.feedback_ids) {
          const r = found.get(id);
          if (r) rows.push(r);
          else unknown.push(id);
        }
      } else rows = await data.search(loaded.value, stems, args.limit ?? 10);
      if (rows.length === 0) {
        return unknown.length
          ? errorResult(
              'unknown_feedback_ids',
              `none of the feedback_ids exist: ${unknown.slice(0, 10).join(', ')}`,
              '',
              'use ids returned by read_feedback_csv or feedback_stats',
            )
          : okResult({ evidence: [], unknown_ids: [], note: 'no row contains these terms' });
      }
      const evidence = rows.map((r) => ({
        feedback_id: r.feedback_id,
        evidence_text: selectQuote(r.text, stems, lang),
        row: r.row,
        rating: r.rating,
        sentiment: scoreSentiment(r.text, null, lang).label,
      }));
      return okResult({ evidence, unknown_ids: unknown });
    },
  };
}
