/**
 * One tool handler call in flight: it ends with the handler's result, the run's cancel or its
 * timeout, whichever comes first. The handler's context is a plain object whose `signal` aborts on
 * either, with the reason. The calls of an executor share one timer, armed
 * for the earliest deadline, and one listener on the run's signal.
 */
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import type { AnyToolDefinition, ToolExecutionContext, ToolResult } from '../../tools/tool.js';

export type FailFn = (code: string, summary: string, detail?: string, hint?: string, retryable?: boolean) => ToolResult;

/**
 * The calls in flight of one executor, the one timer that ends those past their deadline, and the
 * one listener on the run's signal that cancels them all (an EventTarget listener per call was a
 * good part of a fast call's cost).
 */
export class ToolDeadlines {
  private readonly flying = new Set<ToolCallFlight>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private readonly fire = (): void => this.expire();

  constructor(runSignal?: AbortSignal) {
    runSignal?.addEventListener(
      'abort',
      () => {
        for (const f of [...this.flying]) f.cancel(runSignal.reason);
      },
      { once: true },
    );
  }

  add(f: ToolCallFlight): void {
    this.flying.add(f);
    if (f.deadline < this.timerAt) {
      if (this.timer) clearTimeout(this.timer);
      this.timerAt = f.deadline;
      this.timer = setTimeout(this.fire, Math.max(0, f.deadline - Date.now()));
    } else if (this.flying.size === 1) this.timer?.ref();
  }

  delete(f: ToolCallFlight): void {
    this.flying.delete(f);
    // the timer stays armed for a later call (arming one per call is most of a no-op call's cost);
    // with nothing in flight it no longer keeps the process alive
    if (this.flying.size === 0) this.timer?.unref();
  }

  private expire(): void {
    this.timer = null;
    this.timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const f of this.flying) {
      if (f.deadline <= now) f.timeOut();
      else next = Math.min(next, f.deadline);
    }
    if (next < Infinity) {
      this.timerAt = next;
      this.timer = setTimeout(this.fire, Math.max(0, next - now));
      if (this.flying.size === 0) this.timer.unref();
    }
  }
}

export class ToolCallFlight {
  readonly deadline: number;
  private resolve!: (r: ToolResult) => void;
  private settled = false;
  /** aborted when the run is cancelled or the call times out; the handler's `signal` */
  private readonly ctl = new AbortController();
  readonly result: Promise<ToolResult>;
  private readonly timeoutMs: number;
  private readonly deadlines: ToolDeadlines;
  private readonly fail: FailFn;

  // positional: an options object per call is one allocation more on the hot path
  constructor(
    private readonly tool: AnyToolDefinition,
    args: unknown,
    toolCallId: string,
    timeoutMs: number,
    deadlines: ToolDeadlines,
    fail: FailFn,
    reporter?: OperationReporter,
    approved = false,
  ) {
    this.deadline = Date.now() + timeoutMs;
    this.timeoutMs = timeoutMs;
    this.deadlines = deadlines;
    this.fail = fail;
    this.result = new Promise<ToolResult>((r) => (this.resolve = r));
    deadlines.add(this);
    const ctx: ToolExecutionContext = { signal: this.ctl.signal, toolCallId, reporter, approvedByPerson: approved };
    let handled: Promise<ToolResult>;
    try {
      handled = Promise.resolve(tool.execute(args, ctx));
    } catch (e) {
      handled = Promise.reject(e);
    }
    handled.then(
      (r) =>
        this.settle(
          r && typeof r === 'object' && typeof r.ok === 'boolean' && typeof r.content === 'string'
            ? r
            : fail('invalid_output', `${tool.name} returned a malformed result`, 'expected { ok, content }'),
        ),
      (e: unknown) => {
        const err = e as Error;
        this.settle(fail('tool_error', `${tool.name} failed: ${err?.message ?? String(e)}`, err?.name && err.name !== 'Error' ? err.name : ''));
      },
    );
  }

  /** The run was cancelled: the handler is told, the call ends cancelled. */
  cancel(reason: unknown): void {
    this.stop(reason);
    this.settle(this.fail('cancelled', `${this.tool.name} cancelled`));
  }

  timeOut(): void {
    this.stop(new Error('timeout'));
    this.settle(this.fail('tool_timeout', `${this.tool.name} timed out after ${this.timeoutMs} ms`, '', 'try smaller input or a narrower request', true));
  }

  private stop(reason: unknown): void {
    if (!this.ctl.signal.aborted) this.ctl.abort(reason);
  }

  private settle(r: ToolResult): void {
    if (this.settled) return;
    this.settled = true;
    this.deadlines.delete(this);
    this.resolve(r);
  }
}
