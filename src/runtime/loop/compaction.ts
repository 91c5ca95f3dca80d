/**
 * Context compaction (the `compaction` stream of the bus). Before each model turn the
 * loop weighs its context (the provider's token counts when known, an estimate otherwise); past
 * `window − reserve` the turns older than the kept tail become one summary — written by the model,
 * or extracted deterministically for the offline and script models — never separating a tool call
 * from its result, always keeping the system prompt, the goal and the plan state.
 */
import type { DiagnosisInit } from '../../events/diagnosis.js';
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import type { ChatMessage, ModelProvider, ToolSpec, TokenUsage } from '../../providers/model-provider.js';
import { estimateMessageTokens, estimateRequestTokens } from '../../providers/token-estimate.js';
import { extractiveSummary, SUMMARY_PREFIX } from '../../providers/extractive-summary.js';

export { extractiveSummary, SUMMARY_PREFIX };
import type { PublishFn } from '../run-publisher.js';

/** The provider's counts of the last turn, and how many messages that request had. */
export interface UsageMark {
  usage: TokenUsage;
  messageCount: number;
}

export interface CompactionRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  lastUsage?: UsageMark;
  /** A provider said the context is too long: compact whatever can be, whatever the estimate says. */
  force: boolean;
  signal: AbortSignal;
}

/** `messages` when they were compacted (the loop takes them); a diagnosis when even that cannot fit. */
export type CompactionResult = { ok: true; messages?: ChatMessage[] } | { ok: false; diagnosis: DiagnosisInit };

export interface ContextCompactor {
  /** Resolves with its outcome (a context that cannot fit is `ok: false`); must not reject: the loop
   *  does not catch a rejection, which ends the run failed. */
  compact(req: CompactionRequest): Promise<CompactionResult>;
}

/** pi's figures: 16k tokens of room for the reply, the newest 20k kept verbatim — scaled down for small windows. */
export const RESERVE_TOKENS = 16_000;
export const KEEP_TAIL_TOKENS = 20_000;

export function compactionBudget(window: number): { reserve: number; keepTail: number } {
  return { reserve: Math.min(RESERVE_TOKENS, Math.floor(window * 0.25)), keepTail: Math.min(KEEP_TAIL_TOKENS, Math.floor(window * 0.4)) };
}

export interface CompactionLogEntry {
  ts: string;
  method: 'model' | 'extractive';
  tokens_before: number;
  tokens_after: number;
  window: number;
  summary: string;
  replaced: ChatMessage[];
}

export interface CompactorOptions {
  system: string;
  /** The context window checked against: limits.context_tokens, else the model's. */
  window: number;
  /** Index of the run's goal message (after the conversation's history): never compacted. */
  goalIndex: number;
  /** The summary of `turns` (a model's, from `transcript`), or null to use the extractive one. */
  summarize: ((turns: ChatMessage[], transcript: string, signal: AbortSignal) => Promise<string | null>) | null;
  /** The plan's todo state, as text, for the summary. */
  planState?: () => string;
  publish: PublishFn;
  /** A runtime operation per compaction (`stage: 'compaction'`) so channels show it as a process frame. */
  reporter?: (n: number) => OperationReporter | undefined;
  log?: (entry: CompactionLogEntry) => Promise<void>;
}

/** Where the kept tail starts: the newest messages within `keepTail` tokens, beginning at a turn
 *  (never on a tool result, so no result is kept without the call that asked for it). */
export function tailStart(messages: readonly ChatMessage[], after: number, keepTail: number): number {
  let start = messages.length;
  let tokens = 0;
  for (let i = messages.length - 1; i > after; i--) {
    const t = estimateMessageTokens(messages[i]);
    if (tokens + t > keepTail && start < messages.length) break;
    tokens += t;
    start = i;
  }
  while (start < messages.length && messages[start].role === 'tool') start++;
  return start;
}

/** The transcript a model summarises: the same lines as the extractive summary, with more room. */
function transcriptOf(messages: readonly ChatMessage[], maxChars: number): string {
  const t = extractiveSummary(messages, 400);
  return t.length > maxChars ? `${t.slice(0, maxChars)}\n- …` : t;
}

export const SUMMARY_SYSTEM =
  'You compact the context of an agent run. Summarise the earlier turns below for the agent that continues the run: ' +
  'what it has done, what each tool returned that still matters (ids, paths, figures, errors), what it decided and what is left to do. ' +
  'Be concise and factual; do not invent anything; write no preamble.';

/** The summary through the run's own provider (the offline and script models extract theirs from
 *  `summaryOf`); null when the call fails, and the extractive one is used. */
export function providerSummarizer(provider: ModelProvider): (turns: ChatMessage[], transcript: string, signal: AbortSignal) => Promise<string | null> {
  return async (turns, transcript, signal) => {
    let text = '';
    try {
      for await (const part of provider.stream({
        system: SUMMARY_SYSTEM,
        messages: [{ role: 'user', content: transcript }],
        tools: [],
        signal,
        summaryOf: turns,
      })) {
        if (part.type === 'text-delta') text += part.text;
        else if (part.type === 'error') return null;
      }
    } catch {
      return null;
    }
    return text.trim() || null;
  };
}

export class Compactor implements ContextCompactor {
  private count = 0;

  constructor(private readonly o: CompactorOptions) {}

  private tokensOf(messages: readonly ChatMessage[], tools: ToolSpec[], mark?: UsageMark): number {
    const estimate = estimateRequestTokens({ system: this.o.system, messages, tools });
    if (!mark || mark.messageCount > messages.length) return estimate;
    // the provider counted the last request; what came after it is estimated
    let after = mark.usage.outputTokens;
    for (const m of messages.slice(mark.messageCount + 1)) after += estimateMessageTokens(m);
    return Math.max(mark.usage.inputTokens + after, Math.round(estimate * 0.5));
  }

  async compact(req: CompactionRequest): Promise<CompactionResult> {
    const { window, goalIndex } = this.o;
    const { reserve, keepTail } = compactionBudget(window);
    const weighed = this.tokensOf(req.messages, req.tools, req.lastUsage);
    if (!req.force && weighed <= window - reserve) return { ok: true };
    // nothing but the goal (and the system prompt): nothing to compact; the provider's own check says what does not fit
    if (req.messages.every((_, i) => i === goalIndex)) return { ok: true };
    const before = this.tokensOf(req.messages, req.tools);
    const n = ++this.count;
    const reporter = this.o.reporter?.(n);
    reporter?.start(`compacting the context: about ${weighed} tokens of a ${window}-token window`, { tokensBefore: before, window });
    reporter?.stage('compaction');
    this.o.publish('compaction', { phase: 'start', tokensBefore: before });
    const end = (data: { tokensAfter?: number; replaced?: number; failed?: string }) =>
      this.o.publish('compaction', {
        phase: 'end',
        willRetry: req.force && !data.failed,
        tokensBefore: before,
        ...(data.tokensAfter !== undefined ? { tokensAfter: data.tokensAfter } : {}),
        ...(data.replaced !== undefined ? { replacedMessages: data.replaced } : {}),
        ...(data.failed ? { failed: data.failed } : {}),
      });
    const fits = (tokens: number) => tokens <= window - Math.min(reserve, 1_024);

    // the tail shrinks until what is left fits and is smaller; one that cannot is a context_length failure, never a loop
    for (let budget = keepTail; budget >= 64; budget = Math.floor(budget / 2)) {
      const start = tailStart(req.messages, goalIndex, budget);
      const older = req.messages.slice(0, start).filter((_, i) => i !== goalIndex);
      if (older.length === 0) continue;
      const { text, method } = await this.summaryOf(older, req.signal);
      const goal = req.messages[goalIndex];
      const messages = [...(goal ? [goal] : []), { role: 'user' as const, content: text }, ...req.messages.slice(start)];
      const after = this.tokensOf(messages, req.tools);
      if (after >= before || !fits(after)) continue;
      await this.o
        .log?.({ ts: new Date().toISOString(), method, tokens_before: before, tokens_after: after, window, summary: text, replaced: older })
        .catch(() => undefined);
      end({ tokensAfter: after, replaced: older.length });
      reporter?.complete(`compacted ${older.length} messages: about ${before} → ${after} tokens (${method} summary)`, {
        tokensBefore: before,
        tokensAfter: after,
        replaced: older.length,
        method,
      });
      return { ok: true, messages };
    }
    // nothing smaller was found: fine while the request still fits (the provider checks it exactly), else the end
    if (!req.force && fits(weighed)) {
      end({ tokensAfter: before, replaced: 0 });
      reporter?.skip('nothing older to compact that would make the context smaller');
      return { ok: true };
    }
    return this.cannotFit(weighed, end, reporter);
  }

  private async summaryOf(older: ChatMessage[], signal: AbortSignal): Promise<{ text: string; method: 'model' | 'extractive' }> {
    const plan = this.o.planState?.();
    const head = `${SUMMARY_PREFIX}: ${older.length} messages were compacted to fit the context window]`;
    // about 3 characters a token: the transcript leaves the summariser room in the same window
    const model = this.o.summarize ? await this.o.summarize(older, transcriptOf(older, Math.max(2_000, this.o.window * 2)), signal) : null;
    const body = model ?? extractiveSummary(older);
    return { text: [head, plan ? `Plan state:\n${plan}` : '', `Earlier turns:\n${body}`].filter(Boolean).join('\n\n'), method: model ? 'model' : 'extractive' };
  }

  private cannotFit(before: number, end: (d: { failed: string }) => void, reporter: OperationReporter | undefined): CompactionResult {
    const summary = `the context does not fit the ${this.o.window}-token window even after compaction (about ${before} tokens before it; the system prompt, the goal and the newest turn alone do not fit)`;
    end({ failed: summary });
    reporter?.fail(summary);
    return {
      ok: false,
      diagnosis: {
        code: 'context_length',
        severity: 'error',
        summary,
        hint: 'raise limits.context_tokens, use a model with a larger context window, or give the run smaller tool results',
        retryable: false,
      },
    };
  }
}
