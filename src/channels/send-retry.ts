/**
 * How a call to a messaging service is tried again. A refusal for now (429 with its `retry_after`)
 * is retried no sooner than the service asked, plus jitter; a 5xx or a network failure is retried
 * with backoff only when repeating it cannot post twice: the request certainly did not land, or it is
 * an edit, or the service de-duplicates by key. A send that may have landed is given up, not repeated.
 */
import { backoffDelay, sleep } from './backoff.js';
import type { DeliveryFailure, SendResult } from './channel-types.js';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  maxAttempts: number;
  /** The longest single wait: a service asking for more is not waited for (the call fails). */
  maxWaitMs: number;
  /** Backoff of failures that say no time: from this base, doubling … */
  baseMs: number;
  /** … up to this. */
  capMs: number;
  /** A wait the service asked for grows by up to this fraction (never shrinks: coming back early is refused again). */
  jitter: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, maxWaitMs: 5 * 60_000, baseMs: 1000, capMs: 30_000, jitter: 0.2 };

export interface RetryOutcome {
  result: SendResult;
  attempts: number;
  /** The failures retried, in order (for the channel's counters and the log). */
  retried: DeliveryFailure[];
  /** A failed result that may still have reached the chat (a send that was not repeated). */
  mayHaveLanded: boolean;
}

export interface RetryOptions {
  policy?: RetryPolicy;
  /** Repeating the call lands it at most once (an edit, or a keyed send the service de-duplicates). */
  repeatable: boolean;
  signal?: AbortSignal;
  random?: () => number;
  wait?: (ms: number, signal?: AbortSignal) => Promise<boolean>;
}

/** The wait before trying `failure` again, or null when it must not be tried again. */
export function retryDelay(failure: DeliveryFailure, failures: number, repeatable: boolean, policy: RetryPolicy, random: () => number): number | null {
  switch (failure.kind) {
    case 'rejected':
      return null;
    case 'rate_limited':
      return Math.round(failure.retryAfterMs * (1 + policy.jitter * random()));
    case 'unavailable':
      if (failure.landed === 'maybe' && !repeatable) return null;
      if (failure.retryAfterMs !== undefined) return Math.round(failure.retryAfterMs * (1 + policy.jitter * random()));
      return backoffDelay(failures, { baseMs: policy.baseMs, capMs: policy.capMs }, random);
  }
}

/** Runs `call` until it succeeds or the policy says stop. Never throws. */
export async function sendWithRetry(call: () => Promise<SendResult>, opts: RetryOptions): Promise<RetryOutcome> {
  const policy = opts.policy ?? DEFAULT_RETRY_POLICY;
  const random = opts.random ?? Math.random;
  const wait = opts.wait ?? sleep;
  const retried: DeliveryFailure[] = [];
  for (let attempt = 1; ; attempt++) {
    const result = await call();
    if (result.ok) return { result, attempts: attempt, retried, mayHaveLanded: false };
    const f = result.failure;
    const delay = attempt >= policy.maxAttempts ? null : retryDelay(f, attempt, opts.repeatable, policy, random);
    if (delay === null || delay > policy.maxWaitMs || !(await wait(delay, opts.signal))) {
      return { result, attempts: attempt, retried, mayHaveLanded: f.kind === 'unavailable' && f.landed === 'maybe' };
    }
    retried.push(f);
  }
}
