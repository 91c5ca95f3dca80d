/**
 * The `model` stream's payloads, built here only: one model call's start, and its end with what it
 * cost and how long it took. A run's metrics (runtime/metrics.json, model_turns.jsonl) are folded
 * from these, so the end carries everything a model-call line says.
 */
import type { ModelCallOutcome, ModelData } from './agent-event.js';

/** Which call: the loop's turn (1-based), the provider retry (0 for the first try), the model. */
export interface ModelCallId {
  turn: number;
  attempt: number;
  provider: string;
  model: string;
}

export type ModelCallStart = Extract<ModelData, { phase: 'start' }>;
export type ModelCallEnd = Extract<ModelData, { phase: 'end' }>;

/** Milliseconds to the microsecond: enough for a latency, short in events.jsonl. */
const ms = (n: number): number => Math.round(n * 1000) / 1000;

export function modelCallStart(call: ModelCallId): ModelCallStart {
  return { phase: 'start', turn: call.turn, attempt: call.attempt, provider: call.provider, model: call.model };
}

export function modelCallEnd(call: ModelCallId, o: ModelCallOutcome): ModelCallEnd {
  // built field by field: the key order is events.jsonl's
  const data: ModelCallEnd = {
    phase: 'end',
    turn: call.turn,
    attempt: call.attempt,
    provider: call.provider,
    model: call.model,
    finishReason: o.finishReason,
    tokens: o.tokens,
    costUsd: o.costUsd,
    startedAt: o.startedAt,
    latencyMs: ms(o.latencyMs),
    firstTokenMs: o.firstTokenMs === null ? null : ms(o.firstTokenMs),
  };
  if (o.error) data.error = o.error;
  return data;
}
