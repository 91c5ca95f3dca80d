/** file_summary stop validators: summary.md sections have text and the length fits a summary. */
import type { StopValidator } from '../../runtime/agent.js';
import { SUMMARY_FILE } from './artifact-contract.js';
import type { FileSummaryInput } from './input-schema.js';
import { readSourceFile } from './source-file.js';
import { checkSummaryLength, wordCount } from './summary-checks.js';

export const summaryLengthValidator: StopValidator<FileSummaryInput> = {
  name: 'SummaryLength',
  async validate(ctx) {
    let markdown: string;
    try {
      markdown = await ctx.workspace.readText(`artifacts/${SUMMARY_FILE}`);
    } catch {
      return []; // absence is the required-output check's finding
    }
    const src = await readSourceFile(ctx.workspace, ctx.input.path);
    return checkSummaryLength(markdown, src.ok ? wordCount(src.text) : null);
  },
};
