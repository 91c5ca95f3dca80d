/**
 * The default model: a deterministic one that asks the plugin's reference procedure for each
 * turn and streams it like a real model, so runs work with no key and no network.
 */
import type { ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';
import { modelTurnSchema, type ModelTurn, type OfflineProcedure } from './model-turn.js';
import { fitRequest } from './context-fit.js';
import { extractiveSummary } from './extractive-summary.js';
import { abortedDiagnosis, streamTurn } from './turn-stream.js';

export const OFFLINE_MODEL = 'reference-v1';

export class OfflineProvider implements ModelProvider {
  readonly provider = 'offline';
  readonly model: string;
  private readonly procedure: OfflineProcedure;
  private callIds = 0;

  constructor(procedure: OfflineProcedure, model = OFFLINE_MODEL) {
    if (typeof procedure !== 'function') throw new TypeError('createOfflineProvider: procedure must be a function (state) => turn');
    this.procedure = procedure;
    this.model = model;
  }

  /** The procedure answers from the conversation; only the call ids it numbered are its own state. */
  position(): { callIds: number } {
    return { callIds: this.callIds };
  }

  restorePosition(p: unknown): void {
    const at = p as { callIds?: unknown } | null;
    if (typeof at?.callIds === 'number') this.callIds = at.callIds;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const label = `offline:${this.model}`;
    if (request.signal?.aborted) {
      yield { type: 'error', diagnosis: abortedDiagnosis(label) };
      return;
    }
    if (request.summaryOf) {
      // compaction: the procedure's own summary (it knows what it will need again), else an extractive one
      const text = this.procedure.summarize?.(request.summaryOf) ?? extractiveSummary(request.summaryOf);
      yield* streamTurn({ text }, { signal: request.signal, label, inputTokens: 0, nextToolCallId: () => `call_offline_${++this.callIds}` });
      return;
    }
    // a local model has no window of its own; limits.context_tokens still applies
    const fit = fitRequest(request, { label, info: null });
    if (!fit.ok) {
      yield { type: 'error', diagnosis: fit.diagnosis };
      return;
    }
    let turn: ModelTurn;
    try {
      const produced = await this.procedure({ system: request.system, messages: request.messages, tools: request.tools });
      const checked = modelTurnSchema.safeParse(produced);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        throw new Error(`procedure returned an invalid turn: ${issue?.path.join('.') || '(turn)'}: ${issue?.message}`);
      }
      turn = checked.data as ModelTurn;
    } catch (err) {
      yield {
        type: 'error',
        diagnosis: {
          code: 'provider_error',
          severity: 'error',
          summary: `The offline model failed: ${(err as Error)?.message ?? String(err)}`,
          hint: "This is a bug in the plugin's reference procedure.",
          retryable: false,
        },
      };
      return;
    }
    yield* streamTurn(turn, {
      signal: request.signal,
      label,
      inputTokens: fit.estimatedInputTokens,
      nextToolCallId: () => `call_offline_${++this.callIds}`,
    });
  }
}

export function createOfflineProvider(procedure: OfflineProcedure, opts: { model?: string } = {}): OfflineProvider {
  return new OfflineProvider(procedure, opts.model);
}
