/** Time as the scheduler and the webhook deliveries see it: the real one, or a test's fake. */

export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; returns what cancels it. A real timer never keeps the process alive. */
  setTimeout(fn: () => void, ms: number): () => void;
}

/** Node's setTimeout cannot wait longer than this; a longer wait is taken in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, Math.min(ms, MAX_TIMER_MS)));
    t.unref();
    return () => clearTimeout(t);
  },
};
