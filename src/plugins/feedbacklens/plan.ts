/** The four-step plan of a feedback analysis run. */
import type { PlanStep } from '../../runtime/agent.js';
import { FEEDBACK_ANALYSIS_FILE, INSIGHT_REPORT_FILE, PRODUCT_BACKLOG_FILE } from './artifact-schemas.js';

export function feedbackLensPlan(extraAnalysisTools: string[] = []): PlanStep[] {
  return [
    { id: 'read', title: 'Read and validate the feedback data', tools: ['read_feedback_csv'], doneWhenToolsSucceeded: ['read_feedback_csv'] },
    {
      id: 'analysis',
      title: 'Create the structured analysis',
      tools: ['feedback_stats', 'extract_evidence', 'write_json_artifact', ...extraAnalysisTools],
      doneWhenArtifactsExist: [FEEDBACK_ANALYSIS_FILE],
    },
    { id: 'backlog', title: 'Create the product backlog', tools: ['extract_evidence', 'write_json_artifact'], doneWhenArtifactsExist: [PRODUCT_BACKLOG_FILE] },
    { id: 'report', title: 'Create the insight report', tools: ['write_markdown_artifact', 'list_artifacts'], doneWhenArtifactsExist: [INSIGHT_REPORT_FILE] },
  ];
}
