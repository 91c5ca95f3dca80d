/** The file_summary business plugin: one text or Markdown file → artifacts/summary.md. */
import type { Agent } from '../../runtime/agent.js';
import { SUMMARY_FILE, SUMMARY_HEADINGS, fileSummaryArtifacts } from './artifact-contract.js';
import { fileSummaryInputSchema, type FileSummaryInput } from './input-schema.js';
import { fileSummaryOfflineProcedure } from './offline-procedure.js';
import { summaryLengthValidator } from './stop-validators.js';
import { createReadTextFileTool } from './tools/read-text-file-tool.js';
import { createWriteSummaryTool } from './tools/write-summary-tool.js';

export const FILE_SUMMARY_VERSION = '1.0.0';

export function createFileSummaryPlugin(): Agent<FileSummaryInput> {
  return {
    name: 'file_summary',
    version: FILE_SUMMARY_VERSION,
    description: 'Summarise a text or Markdown file into summary.md with a short summary and key points.',
    inputSchema: fileSummaryInputSchema,
    fileInputs: ['path'],
    defaultSkill: 'file_summary',
    defaultGoal: 'Summarise the file: what it is about and its key points.',
    promptFragments: [
      'You summarise one document. Read it with read_text_file (all slices until next_offset is null) before writing.',
      `Write ${SUMMARY_FILE} with write_summary, using the headings ${SUMMARY_HEADINGS.map((h) => `"## ${h}"`).join(' and ')}; keep it faithful to the source and much shorter than it.`,
      'Finish with a short answer that gives the gist.',
    ],
    createTools: (ctx) => [createReadTextFileTool(ctx.workspace, ctx.input.path), createWriteSummaryTool(ctx.workspace, ctx.input.path)],
    plan: [
      { id: 'read', title: 'Read the document', tools: ['read_text_file'], doneWhenToolsSucceeded: ['read_text_file'] },
      { id: 'summary', title: 'Write the summary', tools: ['write_summary'], doneWhenArtifactsExist: [SUMMARY_FILE] },
    ],
    artifacts: fileSummaryArtifacts,
    validators: [summaryLengthValidator],
    offlineProcedure: fileSummaryOfflineProcedure,
  };
}
