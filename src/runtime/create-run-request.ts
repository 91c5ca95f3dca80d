/** The shape check of CreateRunRequest (before plugin-specific input validation). */
import { z } from 'zod';
import { MIN_REPLY_TOKENS } from '../providers/context-fit.js';
import { REASONING_EFFORTS } from '../providers/model-provider.js';

// the front doors (CLI, server) validate reasoning against the same list
export { REASONING_EFFORTS, type ReasoningEffort } from '../providers/model-provider.js';
import type { CreateRunRequest, RunLimits } from './run-service-types.js';

/** A window smaller than a reply's minimum room could never be used. */
const MIN_CONTEXT_TOKENS = 2 * MIN_REPLY_TOKENS;

const limits = z.strictObject({
  max_iterations: z.number().int().min(1).max(200).optional(),
  max_tool_calls: z.number().int().min(1).max(1000).optional(),
  timeout_s: z.number().positive().max(86_400).optional(),
  stop_repair_turns: z.number().int().min(0).max(10).optional(),
  context_tokens: z.number().int().min(MIN_CONTEXT_TOKENS).max(100_000_000).optional(),
  approval_timeout_s: z.number().positive().max(86_400).optional(),
});

const safeId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_:-][A-Za-z0-9_.:-]*$/, 'letters, digits and _ . : - only')
  .refine((s) => !s.includes('..'), 'must not contain ".."');

export const createRunRequestSchema = z.strictObject({
  plugin: z.string().min(1).max(100),
  goal: z.string().max(8000).optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  model: z.union([z.string().max(500), z.looseObject({ provider: z.string().min(1).max(100), model: z.string().max(300).optional() })]).optional(),
  limits: limits.optional(),
  reasoning: z.enum(REASONING_EFFORTS, { error: `must be one of ${REASONING_EFFORTS.join(', ')}` }).optional(),
  skill: z.string().min(1).max(100).optional(),
  conversation_id: safeId.optional(),
  tenant_id: z.string().max(200).optional(),
});

export type ParsedCreateRunRequest = z.infer<typeof createRunRequestSchema> & CreateRunRequest & { limits?: Partial<RunLimits> };

export function zodIssues(err: z.ZodError, prefix = ''): Array<{ path: string; message: string }> {
  return err.issues.map((i) => {
    const p = i.path.map(String).join('.');
    const path = prefix ? (p ? `${prefix}.${p}` : prefix) : p || '(body)';
    // name unknown keys so the user sees which field is extra
    const keys = (i as { keys?: string[] }).keys;
    const message = i.code === 'unrecognized_keys' && keys?.length ? `unknown field(s): ${keys.join(', ')}` : i.message;
    return { path, message };
  });
}
