/**
 * Failed sign-ins, counted per client address and per key id over the last minute: past a limit the
 * address (or the key id, from any address) is refused with 429 and when to try again, before any key
 * is checked. Guessing secrets from many addresses still meets the per-key limit; one address trying
 * many key ids meets its own.
 */
export interface SignInLimits {
  /** Failures one address may have in a minute (60). */
  perAddress: number;
  /** Failures one key id may have in a minute, from anywhere (10). */
  perKeyId: number;
}

export const SIGN_IN_LIMIT_DEFAULTS: SignInLimits = { perAddress: 60, perKeyId: 10 };

const WINDOW_MS = 60_000;
/** Counters kept at most; past it the oldest are dropped (an attacker's spray cannot fill memory). */
const MAX_COUNTERS = 100_000;

export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: SignInLimits = SIGN_IN_LIMIT_DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait when `address` or `keyId` is over its limit, else 0. */
  retryAfterS(address: string, keyId: string | undefined): number {
    const t = this.now();
    const wait = (name: string, limit: number) => {
      const recent = this.recent(name, t);
      return recent.length >= limit ? Math.max(1, Math.ceil((recent[recent.length - limit] + WINDOW_MS - t) / 1000)) : 0;
    };
    return Math.max(wait(`a:${address}`, this.limits.perAddress), keyId ? wait(`k:${keyId}`, this.limits.perKeyId) : 0);
  }

  fail(address: string, keyId: string | undefined): void {
    const t = this.now();
    for (const name of keyId ? [`a:${address}`, `k:${keyId}`] : [`a:${address}`]) {
      const recent = this.recent(name, t);
      recent.push(t);
      this.failures.delete(name);
      this.failures.set(name, recent);
    }
    while (this.failures.size > MAX_COUNTERS) this.failures.delete(this.failures.keys().next().value as string);
  }

  private recent(name: string, t: number): number[] {
    const all = this.failures.get(name) ?? [];
    const i = all.findIndex((x) => x > t - WINDOW_MS);
    return i < 0 ? [] : i === 0 ? all : all.slice(i);
  }
}
