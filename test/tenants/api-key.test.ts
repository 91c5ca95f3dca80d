/** The key's text: its shape, and a checksum that refuses typos and made-up keys without a lookup. */
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyHash, keyHashMatches, newApiKey, newKeyId, parseApiKey } from '../../src/tenants/api-key.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('API keys', () => {
  it('look like rt_<12-char id>_<32-char secret><6-char checksum> and parse back to their id', () => {
    const id = newKeyId();
    const key = newApiKey(id);
    expect(key).toMatch(/^rt_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
    expect(parseApiKey(key)).toEqual({ keyId: id });
    expect(newApiKey(id)).not.toBe(key);
  });

  it('refuses every one-character typo of a key by its checksum', () => {
    const key = newApiKey(newKeyId());
    let refused = 0;
    let tried = 0;
    for (let i = 3; i < key.length; i++) {
      if (key[i] === '_') continue;
      for (const c of BASE62) {
        if (c === key[i]) continue;
        tried++;
        if (parseApiKey(key.slice(0, i) + c + key.slice(i + 1)) === null) refused++;
      }
    }
    // a 32-bit checksum lets about one in four billion through; none of these ~3,000 may pass
    expect(refused).toBe(tried);
  });

  it('refuses fuzzed and truncated texts', () => {
    const key = newApiKey(newKeyId());
    expect(parseApiKey(key.slice(0, -1))).toBeNull();
    expect(parseApiKey(`${key}x`)).toBeNull();
    expect(parseApiKey(key.replace('rt_', 'rk_'))).toBeNull();
    for (let n = 0; n < 2000; n++) {
      let s = 'rt_';
      for (let i = 0; i < 12; i++) s += BASE62[randomInt(62)];
      s += '_';
      for (let i = 0; i < 38; i++) s += BASE62[randomInt(62)];
      expect(parseApiKey(s)).toBeNull();
    }
  });

  it('stores a SHA-256 of the key that matches only that key', () => {
    const key = newApiKey(newKeyId());
    const h = keyHash(key);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toContain(key.slice(16, 48));
    expect(keyHashMatches(key, h)).toBe(true);
    expect(keyHashMatches(newApiKey(newKeyId()), h)).toBe(false);
    expect(keyHashMatches(key, 'nothex')).toBe(false);
  });
});
