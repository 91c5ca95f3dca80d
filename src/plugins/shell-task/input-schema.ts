import { z } from 'zod';
import { MAX_COMMAND_CHARS } from '../../tools/exec-config.js';

export const shellTaskInputSchema = z.object({
  command: z
    .string()
    .refine((s) => s.trim() !== '', 'command must not be empty')
    .refine((s) => s.length <= MAX_COMMAND_CHARS, `command must be at most ${MAX_COMMAND_CHARS} chars`)
    .describe('the shell command to run'),
  workdir: z.string().min(1).optional().describe('working directory (default: the run folder)'),
});
export type ShellTaskInput = z.infer<typeof shellTaskInputSchema>;
