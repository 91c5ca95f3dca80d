/**
 * The feedbacklens artifact contract: zod schemas for the two JSON artifacts and the report's
 * required headings. ARTIFACTS.md documents the same shapes for people.
 */
import { z } from 'zod';
import { oneOf, text } from '../shared/schema-helpers.js';

export const FEEDBACK_ANALYSIS_FILE = 'feedback_analysis.json';
export const PRODUCT_BACKLOG_FILE = 'product_backlog.json';
export const INSIGHT_REPORT_FILE = 'insight_report.md';

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export const PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
export const THEME_SENTIMENTS = ['positive', 'neutral', 'negative', 'mixed'] as const;

const feedbackId = text(1, 200);
const count = z.number().int().min(0);
const share = z.number().min(0).max(1);

/** A quote: `evidence_text` must be a verbatim part of row `feedback_id` of the evidence index. */
export const evidenceSchema = z.object({
  feedback_id: feedbackId,
  evidence_text: text(3, 1000),
});

export const themeSchema = z.object({
  theme_id: text(1, 50),
  title: text(1, 200),
  summary: text(1, 2000),
  key_terms: z.array(text(1, 100)).max(20),
  mention_count: count,
  share,
  sentiment: oneOf(THEME_SENTIMENTS),
  severity: oneOf(SEVERITIES),
  average_rating: z.number().nullable(),
  feedback_ids: z.array(feedbackId).min(1, { error: 'a theme needs at least one feedback_id' }),
  evidence: z.array(evidenceSchema).min(1, { error: 'a theme needs at least one quote' }),
});

export const feedbackAnalysisSchema = z.object({
  product_name: text(1, 200),
  goal: text(0, 2000),
  source: z.object({
    csv_path: text(1, 1000),
    total_rows: count,
    analysed_rows: count,
    id_source: oneOf(['column', 'generated'] as const),
    /** large inputs: the themes were fitted on this many rows (feedback_stats' theme_sample); counts still cover analysed_rows */
    sample: z.object({ rows: count, seed: z.number().int(), method: text(1, 1000) }).optional(),
  }),
  summary: text(1, 4000),
  sentiment: z.object({
    positive: count,
    neutral: count,
    negative: count,
    average_score: z.number(),
  }),
  themes: z.array(themeSchema).min(1, { error: 'at least one theme is required' }),
  insights: z
    .array(
      z.object({
        insight: text(1, 2000),
        theme_id: text(1, 50),
        evidence: z.array(evidenceSchema).min(1, { error: 'an insight needs at least one quote' }),
      }),
    )
    .min(1, { error: 'at least one insight is required' }),
});

export const backlogItemSchema = z.object({
  id: text(1, 50),
  title: text(1, 300),
  description: text(1, 4000),
  priority: oneOf(PRIORITIES),
  severity: oneOf(SEVERITIES),
  theme_id: text(1, 50),
  mention_count: count,
  priority_score: z.number().min(0),
  rationale: text(1, 2000),
  evidence: z.array(evidenceSchema).min(1, { error: 'a backlog item needs at least one quote' }),
});

export const productBacklogSchema = z.object({
  product_name: text(1, 200),
  items: z.array(backlogItemSchema).min(1, { error: 'at least one backlog item is required' }),
});

export type Evidence = z.infer<typeof evidenceSchema>;
export type FeedbackAnalysisDoc = z.infer<typeof feedbackAnalysisSchema>;
export type ProductBacklogDoc = z.infer<typeof productBacklogSchema>;

export const INSIGHT_REPORT_HEADINGS = ['Executive Summary', 'Key Themes', 'Prioritized Backlog', 'Evidence', 'Method'];
