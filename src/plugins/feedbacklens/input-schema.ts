/** feedbacklens run input: strict, bounded. */
import { z } from 'zod';

export const feedbackLensInputSchema = z
  .object({
    csv_path: z.string().min(1, { error: 'csv_path must not be empty' }).max(1000, { error: 'csv_path must be at most 1000 characters' }),
    product_name: z.string().min(1).max(200).optional(),
    max_rows: z.number().int().min(1).max(100_000).optional(),
  })
  .strict();

export type FeedbackLensInput = z.infer<typeof feedbackLensInputSchema>;
