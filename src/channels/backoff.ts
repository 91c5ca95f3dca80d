/** Waits between attempts to reach a service: doubling from a base up to a cap, each with jitter. */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
}

/** The wait before attempt `n + 1` after `n` failures in a row (n ≥ 1): between half and all of base·2^(n-1), capped. */
export function backoffDelay(failures: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const full = Math.min(opts.capMs, opts.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(full / 2 + (full / 2) * random());
}

/** Resolves after `ms`, or at once when `signal` aborts (then with false). */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(slept);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
