/** Failed sign-ins per address and per key id over a sliding minute. */
import { describe, expect, it } from 'vitest';
import { SignInLimiter } from '../../src/tenants/sign-in-limiter.js';

describe('SignInLimiter', () => {
  it('limits a key id from any address, an address whatever key it tries, and forgets after a minute', () => {
    let t = 1_000_000;
    const l = new SignInLimiter({ perAddress: 5, perKeyId: 3 }, () => t);
    for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) l.fail(ip, 'AAAAAAAAAAAA');
    expect(l.retryAfterS('4.4.4.4', 'AAAAAAAAAAAA')).toBe(60);
    expect(l.retryAfterS('4.4.4.4', 'BBBBBBBBBBBB')).toBe(0);
    for (let i = 0; i < 5; i++) l.fail('5.5.5.5', undefined);
    expect(l.retryAfterS('5.5.5.5', undefined)).toBeGreaterThan(0);
    t += 30_000;
    expect(l.retryAfterS('4.4.4.4', 'AAAAAAAAAAAA')).toBe(30);
    t += 30_001;
    expect(l.retryAfterS('4.4.4.4', 'AAAAAAAAAAAA')).toBe(0);
    expect(l.retryAfterS('5.5.5.5', undefined)).toBe(0);
  });
});
