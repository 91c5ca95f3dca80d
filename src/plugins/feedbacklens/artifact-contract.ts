/** What a feedbacklens run must deliver under artifacts/. */
import type { ArtifactContract } from '../../runtime/agent.js';
import {
  FEEDBACK_ANALYSIS_FILE,
  INSIGHT_REPORT_FILE,
  INSIGHT_REPORT_HEADINGS,
  PRODUCT_BACKLOG_FILE,
  feedbackAnalysisSchema,
  productBacklogSchema,
} from './artifact-schemas.js';

export const feedbackLensArtifacts: ArtifactContract[] = [
  {
    path: FEEDBACK_ANALYSIS_FILE,
    type: 'json',
    audience: 'user',
    sensitivity: 'internal',
    description: 'Structured analysis: sentiment, themes with severity and quotes, insights (see ARTIFACTS.md).',
    required: true,
    schema: feedbackAnalysisSchema,
  },
  {
    path: PRODUCT_BACKLOG_FILE,
    type: 'json',
    audience: 'user',
    sensitivity: 'internal',
    description: 'Prioritised backlog items (P0–P3) derived from the themes, each with evidence.',
    required: true,
    schema: productBacklogSchema,
  },
  {
    path: INSIGHT_REPORT_FILE,
    type: 'markdown',
    audience: 'user',
    sensitivity: 'internal',
    description: 'Readable insight report for the product team.',
    required: true,
    requiredHeadings: INSIGHT_REPORT_HEADINGS,
  },
];
