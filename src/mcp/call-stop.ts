/**
 * What the MCP SDK is handed as a call's `signal`: the SDK reads `aborted`, `reason`,
 * `throwIfAborted()` and adds one `abort` listener that it never removes (it sends
 * `notifications/cancelled` and rejects the call). A real AbortController per call, plus that
 * EventTarget listener, cost more than the rest of an MCP call on the client side (≈18 µs of ≈55),
 * so the executor's stop (cancel, timeout) is passed on through this plain object instead.
 */
export class CallStop {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> = [];

  /** `onAbort` is the call's registration (ToolExecutionContext.onAbort). */
  constructor(onAbort: (listener: (reason: unknown) => void) => void) {
    onAbort((reason) => this.abort(reason));
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(type: string, listener: () => void): void {
    if (type !== 'abort') return;
    if (this.aborted) queueMicrotask(listener);
    else this.listeners.push(listener);
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === 'abort') this.listeners = this.listeners.filter((l) => l !== listener);
  }

  /** The SDK's view: only the members above are read (pinned @modelcontextprotocol/sdk; the cancel tests cover it). */
  asSignal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const ls = this.listeners;
    this.listeners = [];
    for (const l of ls) l();
  }
}
