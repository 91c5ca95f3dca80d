/** The feedbacklens business plugin: feedback CSV → analysis, backlog and report. */
import type { Agent, AgentRunContext } from '../../runtime/agent.js';
import type { AnyToolDefinition } from '../../tools/tool.js';
import { createListArtifactsTool } from '../../tools/list-artifacts-tool.js';
import { createWriteJsonArtifactTool } from '../shared/write-json-artifact-tool.js';
import { createWriteMarkdownArtifactTool } from '../shared/write-markdown-artifact-tool.js';
import { csvRowsProblem } from './analysis/csv-rows-problem.js';
import { feedbackLensArtifacts } from './artifact-contract.js';
import { checkEvidence, citedIds } from './evidence-checks.js';
import { lookupEvidence } from './evidence-index.js';
import { FeedbackDataset } from './feedback-dataset.js';
import { feedbackLensInputSchema, type FeedbackLensInput } from './input-schema.js';
import { feedbackLensOfflineProcedure } from './offline-procedure.js';
import { feedbackLensPlan } from './plan.js';
import { feedbackLensPromptFragments } from './prompt-fragments.js';
import { evidenceVerbatimValidator, feedbackIdsExistValidator } from './stop-validators.js';
import { createExtractEvidenceTool } from './tools/extract-evidence-tool.js';
import { createFeedbackStatsTool } from './tools/feedback-stats-tool.js';
import { createReadFeedbackCsvTool } from './tools/read-feedback-csv-tool.js';

export const FEEDBACKLENS_VERSION = '1.0.0';

export interface FeedbackLensOptions {
  /**
   * Seam for the compute skill: extra tools offered in every run (e.g. `execute_skill` running
   * `csv_profile`). The offline procedure uses `execute_skill` on inputs above 5,000 rows when present.
   */
  extraTools?: (ctx: AgentRunContext<FeedbackLensInput>) => AnyToolDefinition[];
  /** names of those extra tools, so the plan lets step 2 use them */
  extraToolNames?: string[];
}

export function createFeedbackLensPlugin(opts: FeedbackLensOptions = {}): Agent<FeedbackLensInput> {
  return {
    name: 'feedbacklens',
    version: FEEDBACKLENS_VERSION,
    description: 'Analyse a feedback CSV: sentiment, themes, prioritised backlog and an insight report, every claim backed by a real quote.',
    inputSchema: feedbackLensInputSchema,
    fileInputs: ['csv_path'],
    inputFileProblem: (_key, file) => csvRowsProblem(file),
    defaultSkill: 'feedback_analysis',
    defaultGoal: 'Find the most important product problems in the feedback and prioritise them.',
    promptFragments: feedbackLensPromptFragments,
    createTools(ctx) {
      const data = new FeedbackDataset(ctx.workspace, ctx.input.csv_path, ctx.input.max_rows, ctx.input.product_name);
      const tools: AnyToolDefinition[] = [
        createReadFeedbackCsvTool(data, ctx.input.product_name),
        createFeedbackStatsTool(data),
        createExtractEvidenceTool(data),
        createWriteJsonArtifactTool({
          workspace: ctx.workspace,
          contracts: feedbackLensArtifacts,
          // catch invented ids and paraphrased quotes at write time, not only at the end
          async extraCheck(path, value) {
            const index = await lookupEvidence(ctx.workspace, citedIds(value));
            return typeof index === 'string' ? [] : checkEvidence(path, value, index, 20);
          },
        }),
        createWriteMarkdownArtifactTool({ workspace: ctx.workspace, contracts: feedbackLensArtifacts }),
        createListArtifactsTool({ workspace: ctx.workspace, contracts: feedbackLensArtifacts }),
      ];
      return [...tools, ...(opts.extraTools?.(ctx) ?? [])];
    },
    plan: feedbackLensPlan(opts.extraToolNames ?? []),
    artifacts: feedbackLensArtifacts,
    validators: [feedbackIdsExistValidator, evidenceVerbatimValidator],
    offlineProcedure: feedbackLensOfflineProcedure,
  };
}
