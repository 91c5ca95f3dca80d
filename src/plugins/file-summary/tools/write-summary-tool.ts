/** `write_summary`: writes artifacts/summary.md after checking headings and length. */
import { z } from 'zod';
import type { WorkspaceAccess } from '../../../runtime/agent.js';
import type { ToolDefinition } from '../../../tools/tool.js';
import { checkMarkdown } from '../../../tools/artifact-contract-checks.js';
import { errorResult, okResult } from '../../shared/tool-result.js';
import { fileSummaryArtifacts, SUMMARY_FILE, SUMMARY_HEADINGS } from '../artifact-contract.js';
import { readSourceFile } from '../source-file.js';
import { checkSummaryLength, wordCount } from '../summary-checks.js';

export const writeSummaryArgs = z.object({
  content: z
    .string()
    .min(1)
    .max(200_000)
    .describe(`the Markdown summary, with the headings: ${SUMMARY_HEADINGS.join(', ')}`),
});
export type WriteSummaryArgs = z.infer<typeof writeSummaryArgs>;

export function createWriteSummaryTool(ws: WorkspaceAccess, sourcePath: string): ToolDefinition<WriteSummaryArgs> {
  return {
    name: 'write_summary',
    description: `Write artifacts/${SUMMARY_FILE}. It must contain the headings ${SUMMARY_HEADINGS.map((h) => `"## ${h}"`).join(' and ')}, each with text, and be much shorter than the source.`,
    parameters: writeSummaryArgs,
    async execute(args) {
      const src = await readSourceFile(ws, sourcePath);
      const issues = [...checkMarkdown(fileSummaryArtifacts[0], args.content), ...checkSummaryLength(args.content, src.ok ? wordCount(src.text) : null)];
      if (issues.length > 0) {
        return errorResult(
          'artifact_rejected',
          `${SUMMARY_FILE} rejected: ${issues.length} problem(s); nothing was written`,
          issues.map((i) => i.message).join('\n'),
          '',
          {
            issues: issues.map((i) => i.message),
          },
        );
      }
      try {
        const w = await ws.writeArtifact(SUMMARY_FILE, args.content.endsWith('\n') ? args.content : `${args.content}\n`);
        return okResult({ path: w.path, bytes: w.bytes, words: wordCount(args.content) });
      } catch (e) {
        return errorResult('write_refused', `cannot write ${SUMMARY_FILE}: ${(e as Error).message}`);
      }
    },
  };
}
