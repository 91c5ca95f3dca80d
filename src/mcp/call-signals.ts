/**
 * Signals of one call each that follow a longer-lived signal (a run's, a caller's), with a single
 * abort listener on that signal however many calls are in flight, and none once they have ended.
 *
 * The MCP SDK adds an abort listener to the signal of every request and never removes it: handed a
 * signal that lives as long as a run or a connection, every call would leave one behind. A signal
 * of the call's own takes that listener and goes with the call.
 */
export interface CallSignal {
  readonly signal: AbortSignal;
  /** The call has ended: it no longer follows the longer-lived signal. */
  end(): void;
}

interface Followers {
  calls: Set<AbortController>;
  onAbort(): void;
}

export class CallSignals {
  private readonly followed = new Map<AbortSignal, Followers>();

  /** A signal for one call, aborted with `parent`'s reason when `parent` aborts before `end()`. */
  open(parent: AbortSignal): CallSignal {
    const call = new AbortController();
    if (parent.aborted) {
      call.abort(parent.reason);
      return { signal: call.signal, end: () => undefined };
    }
    let f = this.followed.get(parent);
    if (!f) {
      const calls = new Set<AbortController>();
      const onAbort = (): void => {
        this.followed.delete(parent);
        for (const c of calls) c.abort(parent.reason);
      };
      f = { calls, onAbort };
      this.followed.set(parent, f);
      parent.addEventListener('abort', onAbort, { once: true });
    }
    f.calls.add(call);
    const followers = f;
    return {
      signal: call.signal,
      end: () => {
        followers.calls.delete(call);
        if (followers.calls.size > 0 || this.followed.get(parent) !== followers) return;
        this.followed.delete(parent);
        parent.removeEventListener('abort', followers.onAbort);
      },
    };
  }
}
