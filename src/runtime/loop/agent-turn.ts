/**
 * One model turn of the agent loop: the provider's stream read into the turn's text, reasoning,
 * tool calls and usage, each part published as it arrives (assistant, reasoning, model, notices),
 * the turn tried again on a retryable provider error. What the turn means is the loop's to decide.
 */
import type { DiagnosisInit } from '../../events/diagnosis.js';
import { modelCallEnd, modelCallStart } from '../../events/model-call-event.js';
import { modelCost } from '../../providers/model-catalog.js';
import type {
  ChatMessage,
  ModelProvider,
  ModelStreamPart,
  ReasoningBlock,
  ReasoningEffort,
  ToolCallRequest,
  ToolSpec,
  TokenUsage,
} from '../../providers/model-provider.js';
import type { PublishFn } from '../run-publisher.js';
import { tokenCounts } from '../metrics/run-metrics.js';

export const PROVIDER_RETRIES = 3;

/**
 * Strips hidden text (e.g. <think> tags) from streamed assistant text; the events engineer's filter fits.
 * Must not throw: a throw ends the run failed (from push, as the turn's provider_exception).
 */
export interface TextFilter {
  push(delta: string): string;
  flush(): string;
  /** Hidden thinking removed so far (cleared on read); the loop routes it to the reasoning stream. */
  takeThinking?(): string;
}

export const passThroughFilter = (): TextFilter => ({ push: (d) => d, flush: () => '' });

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export interface TurnResult {
  text: string;
  /** in the order the model asked; `id` is '' where the provider gave none (the loop names those) */
  toolCalls: ToolCallRequest[];
  /** the provider's reasoning blocks (with signatures), kept in the conversation */
  reasoning: ReasoningBlock[];
  error?: DiagnosisInit;
  usage?: TokenUsage;
  /** the provider stopped at its output-token limit */
  truncated?: boolean;
}

export interface ModelTurnOptions {
  provider: ModelProvider;
  system: string;
  /** The tools the model may call, asked for each call. */
  tools: () => ToolSpec[];
  /** Must not throw: a throw ends the run failed. */
  publish: PublishFn;
  reasoning: ReasoningEffort;
  /** Stable for the run: the prompt-cache key of providers that route caches by key (OpenAI). */
  cacheKey?: string;
  contextTokens?: number;
  /** One filter per call; see TextFilter for its contract. */
  createTextFilter?: () => TextFilter;
  /** The backoff between provider retries. `sleep` resolves early (never rejects) when `signal`
   *  aborts; a rejection ends the run failed. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
}

/** The model turns of one loop. */
export class ModelTurns {
  /** provider notices already published (a setting the model ignores is said once) */
  private readonly noticed = new Set<string>();

  constructor(private readonly o: ModelTurnOptions) {}

  /** Turn number `turn` over `messages`: the first call, and up to PROVIDER_RETRIES more while the
   *  provider's error says a retry may work. */
  async take(turn: number, messages: ChatMessage[], signal: AbortSignal): Promise<TurnResult> {
    const sleep = this.o.sleep ?? abortableSleep;
    const backoff = this.o.backoffMs ?? ((n: number) => 500 * 2 ** n);
    for (let attempt = 0; ; attempt++) {
      const result = await this.call(turn, attempt, messages, signal);
      if (!result.error?.retryable || attempt >= PROVIDER_RETRIES || signal.aborted) return result;
      this.o.publish('run', { type: 'notice', text: `model provider error (${result.error.code}): retrying (${attempt + 1}/${PROVIDER_RETRIES})` });
      await sleep(backoff(attempt), signal);
    }
  }

  /** One model call; its start and end are published (the end with its tokens, cost and latencies). */
  private async call(turn: number, attempt: number, messages: ChatMessage[], signal: AbortSignal): Promise<TurnResult> {
    const { provider, publish } = this.o;
    const filter = (this.o.createTextFilter ?? passThroughFilter)();
    let text = '';
    let reasoning = '';
    const toolCalls: ToolCallRequest[] = [];
    const reasoningBlocks: ReasoningBlock[] = [];
    let usage: TokenUsage | undefined;
    let finishReason = 'none';
    let truncated = false;
    let error: DiagnosisInit | undefined;
    const started = performance.now();
    const startedAt = new Date();
    let firstToken: number | null = null;
    const call = { turn, attempt, provider: provider.provider, model: provider.model };
    publish('model', modelCallStart(call));
    const emitReasoning = (delta: string) => {
      if (!delta) return;
      reasoning += delta;
      publish('reasoning', { phase: 'update', text: reasoning, delta });
    };
    const emitText = (visible: string) => {
      emitReasoning(filter.takeThinking?.() ?? '');
      if (!visible) return;
      text += visible;
      publish('assistant', { phase: 'update', text, delta: visible });
    };
    // a provider that ignores the signal must not keep a cancelled or timed-out run waiting: the abort
    // settles the part being waited for (one promise per part; Promise.race against one long-lived
    // "aborted" promise left a reaction on it per part, thousands in a long stream)
    const ABORTED = Symbol('aborted');
    let wake: ((v: typeof ABORTED) => void) | null = null;
    const onAbort = (): void => wake?.(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    const nextPart = (it: AsyncIterator<ModelStreamPart>): Promise<IteratorResult<ModelStreamPart> | typeof ABORTED> =>
      signal.aborted
        ? Promise.resolve(ABORTED)
        : new Promise((resolve, reject) => {
            wake = resolve;
            it.next().then(resolve, reject);
          });
    let iterator: AsyncIterator<ModelStreamPart> | undefined;
    let ended = false;
    try {
      const stream = provider.stream({
        system: this.o.system,
        messages,
        tools: this.o.tools(),
        signal,
        reasoning: this.o.reasoning,
        ...(this.o.cacheKey ? { cacheKey: this.o.cacheKey } : {}),
        ...(this.o.contextTokens !== undefined ? { contextTokens: this.o.contextTokens } : {}),
      });
      iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await nextPart(iterator);
        if (next === ABORTED) break;
        if (next.done) {
          ended = true;
          break;
        }
        const part = next.value;
        // a notice is said before the call is sent: it is not the model's first token
        if (firstToken === null && part.type !== 'finish' && part.type !== 'notice') firstToken = performance.now() - started;
        switch (part.type) {
          case 'text-delta':
            emitText(filter.push(part.text));
            break;
          case 'reasoning-delta':
            emitReasoning(part.text);
            break;
          case 'reasoning-block':
            reasoningBlocks.push(part.block);
            break;
          case 'notice':
            if (!this.noticed.has(part.text)) {
              this.noticed.add(part.text);
              publish('run', { type: 'notice', text: part.text });
            }
            break;
          case 'tool-call':
            toolCalls.push({ id: part.id || '', name: part.name, args: part.args });
            break;
          case 'finish':
            usage = part.usage;
            finishReason = part.reason;
            truncated = part.reason === 'length';
            break;
          case 'error':
            error = part.diagnosis;
            break;
        }
        if (error) break;
      }
    } catch (e) {
      if (!signal.aborted)
        error = { code: 'provider_exception', severity: 'error', summary: `model provider failed: ${(e as Error)?.message ?? String(e)}`, retryable: false };
    } finally {
      signal.removeEventListener('abort', onAbort);
      // a stream left unread (abort, an error part, a throw) is closed so the provider releases its connection
      if (!ended && iterator?.return) {
        const it = iterator;
        void Promise.resolve()
          .then(() => it.return!())
          .catch(() => undefined);
      }
    }
    emitText(filter.flush());
    if (reasoning) publish('reasoning', { phase: 'end', text: reasoning, delta: '' });
    if (text) publish('assistant', { phase: 'end', text, delta: '' });
    publish(
      'model',
      modelCallEnd(call, {
        finishReason: error ? 'error' : finishReason,
        tokens: usage ? tokenCounts(usage) : null,
        costUsd: usage ? modelCost(provider.provider, provider.model, usage, startedAt) : null,
        startedAt: startedAt.getTime(),
        latencyMs: performance.now() - started,
        firstTokenMs: firstToken,
        ...(error ? { error: error.code } : {}),
      }),
    );
    return { text, toolCalls, reasoning: reasoningBlocks, ...(error ? { error } : {}), ...(usage ? { usage } : {}), ...(truncated ? { truncated } : {}) };
  }
}
