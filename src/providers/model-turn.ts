/**
 * One scripted model turn: what the script and offline models replay. The same shape as
 * `ModelTurn` in runtime/agent.ts (providers may not import runtime), so either
 * side's values fit the other.
 */
import { z } from 'zod';
import type { ChatMessage, ToolSpec } from './model-provider.js';

export interface ModelTurn {
  text?: string;
  reasoning?: string;
  toolCalls?: Array<{ name: string; args: unknown }>;
  /** Pause before the turn starts streaming (ms). */
  delayMs?: number;
  /** Pause between streamed chunks (ms); 0 when absent. */
  chunkDelayMs?: number;
  /** Pause of a compaction summary asked before this turn (ms): a slow compaction, reproduced. */
  summaryDelayMs?: number;
  /** Simulated provider failure for this turn. */
  error?: { code: string; message: string; retryable?: boolean };
}

export interface ProcedureState {
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
}

/** The offline model's brain for one plugin: given the conversation so far, the next turn. With
 *  `summarize`, it also writes the summary that replaces older turns when the context is compacted
 *  (it should keep what the procedure reads back later); without it a generic extractive one is used. */
export type OfflineProcedure = ((state: ProcedureState) => ModelTurn | Promise<ModelTurn>) & {
  summarize?: (turns: ChatMessage[]) => string;
};

const MAX_DELAY_MS = 600_000;

export const modelTurnSchema = z
  .object({
    text: z.string().optional(),
    reasoning: z.string().optional(),
    toolCalls: z
      .array(
        z
          .object({
            name: z.string().min(1, 'must be a non-empty tool name'),
            args: z.unknown().optional(),
          })
          .strict(),
      )
      .optional(),
    delayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
    chunkDelayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
    summaryDelayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
    error: z
      .object({
        code: z.string().min(1, 'must be a non-empty error code'),
        message: z.string(),
        retryable: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type ParseTurnsResult = { ok: true; turns: ModelTurn[] } | { ok: false; errors: string[] };

/** Validates a script; each error names the turn index and the field, e.g. `turn 2: toolCalls.0.name: ...`. */
export function parseModelTurns(value: unknown): ParseTurnsResult {
  if (!Array.isArray(value)) {
    return { ok: false, errors: [`script must be a JSON array of turns, got ${describeType(value)}`] };
  }
  if (value.length === 0) return { ok: false, errors: ['script must contain at least one turn'] };
  const errors: string[] = [];
  const turns: ModelTurn[] = [];
  value.forEach((raw, index) => {
    const parsed = modelTurnSchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.path.length ? issue.path.join('.') : '(turn)';
        errors.push(`turn ${index}: ${field}: ${issue.message}`);
      }
      return;
    }
    // Tool calls without args mean "no arguments".
    const turn = parsed.data as ModelTurn;
    if (turn.toolCalls) turn.toolCalls = turn.toolCalls.map((c) => ({ name: c.name, args: c.args ?? {} }));
    turns.push(turn);
  });
  return errors.length ? { ok: false, errors } : { ok: true, turns };
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
