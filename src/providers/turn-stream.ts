/** Streams one ModelTurn as model parts: what the script and offline models share. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { ModelStreamPart, TokenUsage } from './model-provider.js';
import type { ModelTurn } from './model-turn.js';
import { isRetryableCode } from './provider-errors.js';
import { estimateTokens } from './token-estimate.js';

export { estimateRequestTokens, estimateTokens } from './token-estimate.js';

export interface TurnStreamOptions {
  signal?: AbortSignal;
  /** Who is streaming, for diagnosis texts, e.g. `script:demo.json`. */
  label: string;
  nextToolCallId(): string;
  /** Input tokens charged for this turn. */
  inputTokens: number;
  /** The detail of a turn's `error` (the script model: which script failed on purpose); none by default. */
  failureDetail?: string;
}

const MAX_CHUNK = 24;

/** Word-sized chunks that keep their whitespace, so joining them gives the text back exactly. */
export function chunkText(text: string): string[] {
  const out: string[] = [];
  for (const piece of text.match(/\s*\S+\s*|\s+/g) ?? []) {
    for (let i = 0; i < piece.length; i += MAX_CHUNK) out.push(piece.slice(i, i + MAX_CHUNK));
  }
  return out;
}

export function abortedDiagnosis(label: string): DiagnosisInit {
  return { code: 'aborted', severity: 'warning', summary: `Model call to ${label} was cancelled`, retryable: false };
}

export async function* streamTurn(turn: ModelTurn, opts: TurnStreamOptions): AsyncGenerator<ModelStreamPart> {
  const { signal } = opts;
  const pause = async (ms: number | undefined): Promise<boolean> => {
    if (signal?.aborted) return false;
    if (!ms) return true;
    try {
      await sleep(ms, undefined, { signal });
      return true;
    } catch {
      return false;
    }
  };

  if (!(await pause(turn.delayMs))) {
    yield { type: 'error', diagnosis: abortedDiagnosis(opts.label) };
    return;
  }
  if (turn.error) {
    yield {
      type: 'error',
      diagnosis: {
        code: turn.error.code,
        severity: 'error',
        summary: turn.error.message,
        ...(opts.failureDetail ? { detail: opts.failureDetail } : {}),
        retryable: turn.error.retryable ?? isRetryableCode(turn.error.code),
      },
    };
    return;
  }

  let outputText = '';
  for (const [type, text] of [
    ['reasoning-delta', turn.reasoning ?? ''],
    ['text-delta', turn.text ?? ''],
  ] as const) {
    for (const chunk of chunkText(text)) {
      if (!(await pause(turn.chunkDelayMs))) {
        yield { type: 'error', diagnosis: abortedDiagnosis(opts.label) };
        return;
      }
      outputText += chunk;
      yield { type, text: chunk };
    }
  }
  const calls = turn.toolCalls ?? [];
  for (const call of calls) {
    if (signal?.aborted) {
      yield { type: 'error', diagnosis: abortedDiagnosis(opts.label) };
      return;
    }
    const args = call.args ?? {};
    outputText += call.name + (JSON.stringify(args) ?? '');
    yield { type: 'tool-call', id: opts.nextToolCallId(), name: call.name, args };
  }
  const usage: TokenUsage = { inputTokens: opts.inputTokens, outputTokens: estimateTokens(outputText) };
  yield { type: 'finish', reason: calls.length ? 'tool-calls' : 'stop', usage };
}
