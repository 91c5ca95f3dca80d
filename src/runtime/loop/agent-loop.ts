/**
 * The model ⇄ tools loop: take a model turn (agent-turn.ts), run its tool calls through the executor,
 * feed the observations back, until a final answer or a limit. Errors end the loop as data.
 * The loop only publishes: the run's metrics and its state (model_thinking ⇄ tool_executing) are
 * derived from those events by whoever reads them (the engine); the counters kept here are the
 * loop's own limits and what its checkpoint needs.
 */
import type { DiagnosisDict } from '../../events/diagnosis.js';
import { diagnosis } from '../errors.js';
import type { ChatMessage, ImageAttachment, ModelProvider, ReasoningEffort, ToolCallRequest } from '../../providers/model-provider.js';
import type { RunLimits } from '../run-service-types.js';
import type { ExecutedToolCall, ToolExecutor } from './tool-executor.js';
import type { ContextCompactor, UsageMark } from './compaction.js';
import type { PublishFn } from '../run-publisher.js';
import { ModelTurns, type TextFilter, type TurnResult } from './agent-turn.js';

export const DEFAULT_LIMITS: RunLimits = { max_iterations: 20, max_tool_calls: 60, timeout_s: 600, stop_repair_turns: 0 };
export const REPEAT_LIMIT = 3;

export type LoopOutcome = { kind: 'final'; text: string } | { kind: 'cancelled'; text: string } | { kind: 'failed'; text: string; diagnosis: DiagnosisDict };

/** The loop's own counters, restored with the conversation. */
export interface LoopCounters {
  /** model turns taken; absent in records written before the loop kept it (its metrics' iterations counted the same) */
  iterations?: number;
  toolCalls: number;
  lastText: string;
  answerPrefix: string;
  continuations: number;
  callCounter: number;
}

export interface AgentLoopOptions {
  provider: ModelProvider;
  system: string;
  messages: ChatMessage[];
  /** Runs each call; it never throws (a failure is the call's error result). */
  executor: ToolExecutor;
  /**
   * Every event of the loop and its turns: model calls (start; end with tokens, cost, latencies),
   * assistant and reasoning text, notices. Called synchronously; must not throw: a throw ends the
   * run failed (the loop does not catch it).
   */
  publish: PublishFn;
  limits: RunLimits;
  /** The run's cancel signal (user cancel / shutdown). */
  signal: AbortSignal;
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
   * the answer (a new turn each). `take` empties what it returns. Must not throw: a throw ends the
   * run failed (the loop does not catch it).
   */
  inbox?: { take(mode: 'steer' | 'follow_up'): string[] };
  /**
   * Keeps the context within the model's window (publishes on the `compaction` stream); asked before
   * each turn and after a context_length error. Its `compact` resolves with its outcome (a context
   * that cannot fit is a failed outcome, which ends the loop failed); it must not reject: a
   * rejection ends the run failed.
   */
  compactor?: ContextCompactor;
  /** One filter per model call; see TextFilter for its contract (must not throw). */
  createTextFilter?: () => TextFilter;
  /** Called synchronously when the conversation moved on (a model turn, a tool result, input before
   *  a turn) or was compacted: the run's checkpoint is written then. Must not throw: a throw ends
   *  the run failed (the loop does not catch it); slow work is its own to defer (the loop waits for
   *  nothing it returns). */
  onStep?: (why: 'turn' | 'tool' | 'input' | 'compacted') => void;
  /** A resumed run: its counters, the run time already used (the timeout counts it), and the calls
   *  of the last turn that have no result in the conversation yet (run first, as their batch). */
  resume?: { counters: LoopCounters; usedMs: number; pendingCalls: ToolCallRequest[]; final?: string };
  /** Injectable for tests: the backoff between provider retries. `sleep` resolves early (never
   *  rejects) when its signal aborts; a rejection ends the run failed. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
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
  /** model turns taken (max_iterations); a turn retried after compaction counts once */
  private iterations = 0;
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
  private readonly turns: ModelTurns;

  constructor(private readonly o: AgentLoopOptions) {
    this.messages = [...o.messages];
    this.signal = AbortSignal.any([o.signal, this.deadline.signal]);
    this.turns = new ModelTurns({
      provider: o.provider,
      system: o.system,
      tools: () => o.executor.specs(),
      publish: o.publish,
      reasoning: o.reasoning ?? 'off',
      ...(o.cacheKey ? { cacheKey: o.cacheKey } : {}),
      ...(o.limits.context_tokens !== undefined ? { contextTokens: o.limits.context_tokens } : {}),
      ...(o.createTextFilter ? { createTextFilter: o.createTextFilter } : {}),
      ...(o.sleep ? { sleep: o.sleep } : {}),
      ...(o.backoffMs ? { backoffMs: o.backoffMs } : {}),
    });
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
      iterations: this.iterations,
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
        diagnosis: diagnosis({
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
      this.iterations++;
      let turn = await this.takeTurn();
      // a provider that says the context is too long: compact what can be, then that turn once more
      if (turn.error?.code === 'context_length' && this.o.compactor && !this.stopOutcome()) {
        const failed = await this.compactIfNeeded(true);
        if (failed) return failed;
        turn = await this.takeTurn();
      }
      const stopAfter = this.stopOutcome();
      if (stopAfter) return stopAfter;
      if (turn.error) return { kind: 'failed', text: this.lastText, diagnosis: diagnosis(turn.error) };
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
      const ended = await this.runToolBatch(turn.toolCalls);
      if (ended) return ended;
    }
  }

  /** Stop checks and limits, then what arrived for the model since the last turn (notices, steering). */
  private beforeTurn(): LoopOutcome | null {
    const stop = this.stopOutcome();
    if (stop) return stop;
    const { limits } = this.o;
    if (this.iterations >= limits.max_iterations) {
      return {
        kind: 'failed',
        text: this.lastText,
        diagnosis: diagnosis({
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
    return this.stopOutcome() ?? { kind: 'failed', text: this.lastText, diagnosis: diagnosis(r.diagnosis) };
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
        diagnosis: diagnosis({ code: 'max_tool_calls', severity: 'error', summary: `stopped at max_tool_calls (${limits.max_tool_calls})` }),
      };
    }
    const sig = this.o.executor.isRepeatable(call) ? '' : `${call.name}\u0000${JSON.stringify(call.args)}`;
    this.sameCallStreak = sig !== '' && sig === this.lastCallSig ? this.sameCallStreak + 1 : 1;
    this.lastCallSig = sig;
    if (this.sameCallStreak >= REPEAT_LIMIT) {
      return {
        kind: 'failed',
        text: this.lastText,
        diagnosis: diagnosis({
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

  /** The call's observation for the model, and the repeated-failure guard. */
  private observe(call: ToolCallRequest, done: ExecutedToolCall): LoopOutcome | null {
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
      diagnosis: diagnosis({
        code: 'repeated_tool_failure',
        severity: 'error',
        summary: `${call.name} failed ${REPEAT_LIMIT} times in a row with the same error`,
        detail: done.result.content.slice(0, 500),
      }),
    };
  }

  /** This turn of the model over the conversation; tool calls the provider gave no id are named here. */
  private async takeTurn(): Promise<TurnResult> {
    const turn = await this.turns.take(this.iterations, this.messages, this.signal);
    for (const c of turn.toolCalls) if (!c.id) c.id = `call_${++this.callCounter}`;
    return turn;
  }
}
