/** file_summary run input: one text or Markdown file. */
import { z } from 'zod';

export const fileSummaryInputSchema = z
  .object({
    path: z.string().min(1, { error: 'path must not be empty' }).max(1000, { error: 'path must be at most 1000 characters' }),
  })
  .strict();

export type FileSummaryInput = z.infer<typeof fileSummaryInputSchema>;

/** Text and Markdown only; anything else is refused at the tool with a clear error. */
export const TEXT_EXTENSIONS = ['.md', '.markdown', '.txt', '.text', '.rst', '.adoc', '.org', '.log', ''];
