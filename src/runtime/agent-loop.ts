/**
 * The model ⇄ tools loop: stream a turn, run its tool calls through the executor,
 * feed the observations back, until a final answer or a limit. Errors end the loop as data.
 *
 * Over 400 lines: the turn, the tool batch, retries, steering and resume share the conversation and
 * the counters of one loop; the metrics and the run's state it still updates directly are the next
 * things to move out (derived from the events it publishes).
 */
import { Diagnosis, type DiagnosisDict, type DiagnosisInit } from '../events/diagnosis.js';
import { modelCost } from '../providers/model-catalog.js';
import type {
  ChatMessage,
  ImageAttachment,
  ModelProvider,
  ModelStreamPart,
  ReasoningBlock,
  ReasoningEffort,
  ToolCallRequest,
  TokenUsage,
} from '../providers/model-provider.js';
import type { RunLimits } from './run-service-types.js';
import type { ExecutedToolCall, ToolExecutor } from './tool-executor.js';
import type { ContextCompactor, UsageMark } from './compaction.js';
import type { PublishFn } from './run-publisher.js';
import { tokenCounts, type RunMetrics } from './run-metrics.js';
import type { LoopCounters } from './run-checkpoint.js';

export const DEFAULT_LIMITS: RunLimits = { max_iterations: 20, max_tool_calls: 60, timeout_s: 600, stop_repair_turns: 0 };
export const PROVIDER_RETRIES = 3;
export const REPEAT_LIMIT = 3;

/** Strips hidden text (e.g. <think> tags) from streamed assistant text; the events engineer's filter fits. */
export interface TextFilter {
  push(delta: string): string;
  flush(): string;
  /** Hidden thinking removed so far (cleared on read); the loop routes it to the reasoning stream. */
  takeThinking?(): string;
}

export const passThroughFilter = (): TextFilter => ({ push: (d) => d, flush: () => '' });

export type LoopOutcome = { kind: 'final'; text: string } | { kind: 'cancelled'; text: string } | { kind: 'failed'; text: string; diagnosis: DiagnosisDict };

export interface AgentLoopOptions {
  provider: ModelProvider;
  system: string;
  messages: ChatMessage[];
  executor: ToolExecutor;
  publish: PublishFn;
  limits: RunLimits;
  metrics: RunMetrics;
  /** The run's cancel signal (user cancel / shutdown). */
  signal: AbortSignal;
  /**
   * Called synchronously on model_thinking ⇄ tool_executing, before the turn or the batch it names.
   * Must not throw: a throw ends the run failed (the loop does not catch it).
   */
  setState(state: 'model_thinking' | 'tool_executing'): void;
  /** Reasoning effort asked of the model each turn; default off. */
  reasoning?: ReasoningEffort;
  /** Stable for the run: the prompt-cache key of providers that route caches by key (OpenAI). */
  cacheKey?: string;
  /**
   * Messages to append before each model turn (e.g. background-process notices); each is taken once.
   * Must not throw: a throw ends the run failed.
   */
  drainNotices?: () => string[];
  /**
   * A person's messages to the live run: `steer` ones before the next turn, `follow_up` ones after
   * the answer (a new turn each). `take` empties what it returns and must not throw.
   */
  inbox?: { take(mode: 'steer' | 'follow_up'): string[] };
  /** Keeps the context within the model's window (publishes on the `compaction` stream). */
  compactor?: ContextCompactor;
  createTextFilter?: () => TextFilter;
  /** Called synchronously when the conversation moved on (a model turn, a tool result, input before
   *  a turn) or was compacted: the run's checkpoint is written then. Must not throw; slow work is
   *  its own to defer (the loop waits for nothing it returns). */
  onStep?: (why: 'turn' | 'tool' | 'input' | 'compacted') => void;
  /** A resumed run: its counters, the run time already used (the timeout counts it), and the calls
   *  of the last turn that have no result in the conversation yet (run first, as their batch). */
  resume?: { counters: LoopCounters; usedMs: number; pendingCalls: ToolCallRequest[]; final?: string };
  /** Injectable for tests: the backoff between provider retries. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
}

function diag(init: DiagnosisInit): DiagnosisDict {
  return new Diagnosis(init).toDict();
}

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

interface TurnResult {
  text: string;
  toolCalls: ToolCallRequest[];
  /** the provider's reasoning blocks (with signatures), kept in the conversation */
  reasoning: ReasoningBlock[];
  error?: DiagnosisInit;
  usage?: TokenUsage;
  /** the provider stopped at its output-token limit */
  truncated?: boolean;
}

const MAX_CONTINUATIONS = 2;

/** A tool's images as the conversation keeps them; malformed entries (a plugin bug) are dropped. */
function imagesOf(images: unknown): { images?: ImageAttachment[] } {
  if (!Array.isArray(images)) return {};
  const ok = images.filter(
    (i): i is ImageAttachment =>
      !!i && typeof i === 'object' && typeof (i as ImageAttachment).mediaType === 'string' && typeof (i as ImageAttachment).data === 'string',
  );
  return ok.length ? { images: ok.map((i) => ({ mediaType: i.mediaType, data: i.data, ...(typeof i.label === 'string' ? { label: i.label } : {}) })) } : {};
}

export class AgentLoop {
  readonly messages: ChatMessage[];
  private toolCalls = 0;
  private lastCallSig = '';
  private sameCallStreak = 0;
  private lastFailSig = '';
  private sameFailStreak = 0;
  private callCounter = 0;
  private readonly deadline: AbortController = new AbortController();
  private readonly signal: AbortSignal;
  private timer: NodeJS.Timeout | undefined;
  private lastText = '';
  /** text of earlier turns that were cut off at the output limit, prepended to the final answer */
  private answerPrefix = '';
  private continuations = 0;
  /** the provider's token counts of the last turn, for the compactor's weighing */
  private lastUsage: UsageMark | undefined;
  /** provider notices already published (a setting the model ignores is said once) */
  private readonly noticed = new Set<string>();

  constructor(private readonly o: AgentLoopOptions) {
    this.messages = [...o.messages];
    this.signal = AbortSignal.any([o.signal, this.deadline.signal]);
    if (o.resume) Object.assign(this, o.resume.counters);
    this.timer = setTimeout(() => this.deadline.abort(new Error('timeout')), Math.max(0, o.limits.timeout_s * 1000 - (o.resume?.usedMs ?? 0)));
    this.timer.unref?.();
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  /** What a checkpoint keeps of the loop besides the conversation. */
  counters(): LoopCounters {
    return {
      toolCalls: this.toolCalls,
      lastText: this.lastText,
      answerPrefix: this.answerPrefix,
      continuations: this.continuations,
      callCounter: this.callCounter,
    };
  }

  private stopOutcome(): LoopOutcome | null {
    if (this.o.signal.aborted) return { kind: 'cancelled', text: this.lastText };
    if (this.deadline.signal.aborted) {
      return {
        kind: 'failed',
        text: this.lastText,
        diagnosis: diag({
          code: 'timeout',
          severity: 'error',
          summary: `run exceeded timeout_s (${this.o.limits.timeout_s} s)`,
          hint: 'raise limits.timeout_s or narrow the goal',
        }),
      };
    }
    return null;
  }

  addUserMessage(text: string): void {
    this.messages.push({ role: 'user', content: text });
    this.o.onStep?.('input');
  }

  /** Runs until a final answer or a limit. Can be called again after addUserMessage (stop repair). */
  async run(): Promise<LoopOutcome> {
    // a resumed run first settles the calls its last turn asked for
    const pending = this.o.resume?.pendingCalls.splice(0) ?? [];
    if (pending.length) {
      this.o.setState('tool_executing');
      const ended = await this.runToolBatch(pending);
      if (ended) return ended;
    }
    // or its final answer, given before the process died, goes to validation again
    const final = this.o.resume?.final;
    if (final !== undefined) {
      this.o.resume!.final = undefined;
      return { kind: 'final', text: this.answerPrefix + final };
    }
    for (;;) {
      const stop = this.beforeTurn();
      if (stop) return stop;
      const compacted = await this.compactIfNeeded(false);
      if (compacted) return compacted;
      this.o.setState('model_thinking');
      this.o.metrics.iterations++;
      let turn = await this.turnWithRetries();
      // a provider that says the context is too long: compact what can be, then that turn once more
      if (turn.error?.code === 'context_length' && this.o.compactor && !this.stopOutcome()) {
        const failed = await this.compactIfNeeded(true);
        if (failed) return failed;
        turn = await this.turnWithRetries();
      }
      const stopAfter = this.stopOutcome();
      if (stopAfter) return stopAfter;
      if (turn.error) return { kind: 'failed', text: this.lastText, diagnosis: diag(turn.error) };
      if (turn.text) this.lastText = turn.text;
      this.lastUsage = turn.usage ? { usage: turn.usage, messageCount: this.messages.length } : undefined;
      this.messages.push({
        role: 'assistant',
        content: turn.text,
        ...(turn.toolCalls.length ? { toolCalls: turn.toolCalls } : {}),
        ...(turn.reasoning.length ? { reasoning: turn.reasoning } : {}),
      });
      this.o.onStep?.('turn');
      if (turn.toolCalls.length === 0) {
        if (this.continueAfter(turn)) continue;
        return { kind: 'final', text: this.answerPrefix + turn.text };
      }
      this.o.setState('tool_executing');
      const ended = await this.runToolBatch(turn.toolCalls);
      if (ended) return ended;
    }
  }

  /** Stop checks and limits, then what arrived for the model since the last turn (notices, steering). */
  private beforeTurn(): LoopOutcome | null {
    const stop = this.stopOutcome();
    if (stop) return stop;
    const { limits, metrics } = this.o;
    if (metrics.iterations >= limits.max_iterations) {
      return {
        kind: 'failed',
        text: this.lastText,
        diagnosis: diag({
          code: 'max_iterations',
          severity: 'error',
          summary: `stopped after max_iterations (${limits.max_iterations}) model turns without a final answer`,
        }),
      };
    }
    const before = this.messages.length;
    for (const n of this.o.drainNotices?.() ?? []) this.messages.push({ role: 'user', content: `[notice] ${n}` });
    // the tool boundary: after the last batch, before the next turn (or the first, for a run that was queued)
    for (const text of this.o.inbox?.take('steer') ?? []) this.messages.push({ role: 'user', content: text });
    if (this.messages.length > before) this.o.onStep?.('input');
    return null;
  }

  /** A final-looking turn that goes on: cut off at the output limit, or followed up by a person. */
  private continueAfter(turn: TurnResult): boolean {
    if (turn.truncated && this.continuations < MAX_CONTINUATIONS) {
      this.continuations++;
      this.answerPrefix += turn.text;
      this.o.publish('run', { type: 'notice', text: 'model reply hit the output token limit: asking it to continue' });
      this.messages.push({
        role: 'user',
        content: 'Your reply was cut off by the output token limit. Continue exactly where it stopped, without repeating anything.',
      });
      this.o.onStep?.('input');
      return true;
    }
    const followUps = this.o.inbox?.take('follow_up') ?? [];
    if (followUps.length === 0) return false;
    this.answerPrefix = '';
    for (const text of followUps) this.messages.push({ role: 'user', content: text });
    this.o.onStep?.('input');
    return true;
  }

  /** Null when there was nothing to do or it worked; a failed outcome when even compaction cannot fit the context. */
  private async compactIfNeeded(force: boolean): Promise<LoopOutcome | null> {
    if (!this.o.compactor) return null;
    const r = await this.o.compactor.compact({
      messages: this.messages,
      tools: this.o.executor.specs(),
      lastUsage: this.lastUsage,
      force,
      signal: this.signal,
    });
    if (r.ok) {
      // the messages before the kept tail were replaced by the summary
      if (r.messages) {
        this.messages.splice(0, this.messages.length, ...r.messages);
        this.lastUsage = undefined;
        this.o.onStep?.('compacted');
      }
      return null;
    }
    return this.stopOutcome() ?? { kind: 'failed', text: this.lastText, diagnosis: diag(r.diagnosis) };
  }

  /** One turn's tool calls: concurrently when every one is safe to (read-only, no approval), else in order.
   *  Observations go back in the order the model asked. */
  private async runToolBatch(calls: ToolCallRequest[]): Promise<LoopOutcome | null> {
    const parallel = calls.length > 1 && calls.every((c) => this.o.executor.isParallelSafe(c));
    if (parallel) {
      for (const call of calls) {
        const refused = this.guard(call);
        if (refused) return refused;
      }
      const done = await Promise.all(calls.map((c) => this.o.executor.execute(c)));
      for (let i = 0; i < calls.length; i++) {
        const ended = this.observe(calls[i], done[i]);
        if (ended) return ended;
      }
      return null;
    }
    for (const call of calls) {
      const refused = this.stopOutcome() ?? this.guard(call);
      if (refused) return refused;
      const ended = this.observe(call, await this.o.executor.execute(call));
      if (ended) return ended;
    }
    return null;
  }

  /** The limits a call must pass before it runs: max_tool_calls and the repeated-identical-call guard. */
  private guard(call: ToolCallRequest): LoopOutcome | null {
    const { limits } = this.o;
    if (this.toolCalls >= limits.max_tool_calls) {
      return {
        kind: 'failed',
        text: this.lastText,
        diagnosis: diag({ code: 'max_tool_calls', severity: 'error', summary: `stopped at max_tool_calls (${limits.max_tool_calls})` }),
      };
    }
    const sig = this.o.executor.isRepeatable(call) ? '' : `${call.name}\u0000${JSON.stringify(call.args)}`;
    this.sameCallStreak = sig !== '' && sig === this.lastCallSig ? this.sameCallStreak + 1 : 1;
    this.lastCallSig = sig;
    if (this.sameCallStreak >= REPEAT_LIMIT) {
      return {
        kind: 'failed',
        text: this.lastText,
        diagnosis: diag({
          code: 'repeated_tool_call',
          severity: 'error',
          summary: `${call.name} was called ${REPEAT_LIMIT} times in a row with the same arguments`,
          detail: JSON.stringify(call.args).slice(0, 500),
        }),
      };
    }
    this.toolCalls++;
    return null;
  }

  /** The call's observation for the model, its metrics, and the repeated-failure guard. */
  private observe(call: ToolCallRequest, done: ExecutedToolCall): LoopOutcome | null {
    this.o.metrics.recordTool(call.name, done.result.ok, done.durationMs);
    this.messages.push({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content: done.result.content,
      isError: !done.result.ok,
      ...imagesOf(done.result.images),
    });
    this.o.onStep?.('tool');
    if (done.result.ok) {
      this.sameFailStreak = 0;
      this.lastFailSig = '';
      return null;
    }
    const failSig = `${call.name}\u0000${done.result.content}`;
    this.sameFailStreak = failSig === this.lastFailSig ? this.sameFailStreak + 1 : 1;
    this.lastFailSig = failSig;
    if (this.sameFailStreak < REPEAT_LIMIT) return null;
    return {
      kind: 'failed',
      text: this.lastText,
      diagnosis: diag({
        code: 'repeated_tool_failure',
        severity: 'error',
        summary: `${call.name} failed ${REPEAT_LIMIT} times in a row with the same error`,
        detail: done.result.content.slice(0, 500),
      }),
    };
  }

  private async turnWithRetries(): Promise<TurnResult> {
    const sleep = this.o.sleep ?? abortableSleep;
    const backoff = this.o.backoffMs ?? ((n: number) => 500 * 2 ** n);
    for (let attempt = 0; ; attempt++) {
      const turn = await this.turn(attempt);
      if (!turn.error?.retryable || attempt >= PROVIDER_RETRIES || this.signal.aborted) return turn;
      this.o.metrics.providerRetries++;
      this.o.publish('run', { type: 'notice', text: `model provider error (${turn.error.code}): retrying (${attempt + 1}/${PROVIDER_RETRIES})` });
      await sleep(backoff(attempt), this.signal);
    }
  }

  private async turn(attempt: number): Promise<TurnResult> {
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
    const call = { turn: this.o.metrics.iterations, attempt, provider: provider.provider, model: provider.model };
    publish('model', { phase: 'start', ...call });
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
    this.signal.addEventListener('abort', onAbort, { once: true });
    const nextPart = (it: AsyncIterator<ModelStreamPart>): Promise<IteratorResult<ModelStreamPart> | typeof ABORTED> =>
      this.signal.aborted
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
        messages: this.messages,
        tools: this.o.executor.specs(),
        signal: this.signal,
        reasoning: this.o.reasoning ?? 'off',
        ...(this.o.cacheKey ? { cacheKey: this.o.cacheKey } : {}),
        ...(this.o.limits.context_tokens !== undefined ? { contextTokens: this.o.limits.context_tokens } : {}),
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
            toolCalls.push({ id: part.id || `call_${++this.callCounter}`, name: part.name, args: part.args });
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
      if (!this.signal.aborted)
        error = { code: 'provider_exception', severity: 'error', summary: `model provider failed: ${(e as Error)?.message ?? String(e)}`, retryable: false };
    } finally {
      this.signal.removeEventListener('abort', onAbort);
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
    const latencyMs = performance.now() - started;
    const costUsd = usage ? modelCost(provider.provider, provider.model, usage, startedAt) : null;
    this.o.metrics.recordTurn({
      latencyMs,
      firstTokenMs: firstToken,
      ...(usage ? { usage } : {}),
      costUsd,
      model: `${provider.provider}:${provider.model}`,
      turn: call.turn,
      attempt,
      startedAt,
      finishReason: error ? 'error' : finishReason,
      ...(error ? { errorCode: error.code } : {}),
    });
    const ms = (n: number) => Math.round(n * 1000) / 1000;
    publish('model', {
      phase: 'end',
      ...call,
      finishReason: error ? 'error' : finishReason,
      tokens: usage ? tokenCounts(usage) : null,
      costUsd,
      latencyMs: ms(latencyMs),
      firstTokenMs: firstToken === null ? null : ms(firstToken),
      ...(error ? { error: error.code } : {}),
    });
    return { text, toolCalls, reasoning: reasoningBlocks, ...(error ? { error } : {}), ...(usage ? { usage } : {}), ...(truncated ? { truncated } : {}) };
  }
}
