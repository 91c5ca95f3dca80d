/** Keys to identities: the checksum first, then the hash; rotation grace, expiry, revocation, role changes. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newApiKey } from '../../src/tenants/api-key.js';
import { Authenticator } from '../../src/tenants/authenticator.js';
import { IdentityStore } from '../../src/tenants/identity-store.js';

let dir = '';
let clock = Date.parse('2026-06-01T00:00:00Z');
let store: IdentityStore;
let auth: Authenticator;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-auth-'));
  clock = Date.parse('2026-06-01T00:00:00Z');
  store = new IdentityStore(dir, () => clock);
  // refreshMs 0: every call looks at the file, as a request a second later would
  auth = new Authenticator(store, { serverToken: 'the-server-token-0123456789abcdef', now: () => clock, refreshMs: 0 });
  await store.addTenant({ id: 'acme' });
  await store.addUser('acme', { id: 'al', role: 'member' });
});
afterEach(async () => {
  await auth.close();
  rmSync(dir, { recursive: true, force: true });
});

const reason = async (key: string) => {
  const r = await auth.authenticate(key);
  return r.ok ? 'ok' : r.reason;
};

describe('Authenticator', () => {
  it('makes a scope of the key’s tenant, user, role and scopes; the server token is the owner of default', async () => {
    const { key, view } = await store.addKey('acme', { user: 'al', scopes: ['runs:read'] });
    const r = await auth.authenticate(key);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.scope.identity).toEqual({ tenant: 'acme', user: 'al', role: 'member', scopes: ['runs:read'], keyId: view.id });
    expect(r.scope.owns('acme')).toBe(true);
    expect(r.scope.owns('default')).toBe(false);
    expect(r.scope.owns(undefined)).toBe(false);
    const owner = await auth.authenticate('the-server-token-0123456789abcdef');
    expect(owner.ok && owner.scope.identity.role).toBe('owner');
    expect(owner.ok && owner.scope.owns('acme') && owner.scope.tenantId).toBe('default');
  });

  it('refuses a bad checksum as malformed, an unknown id, and the right id with a wrong secret', async () => {
    const { key, view } = await store.addKey('acme', { user: 'al' });
    expect(await reason(`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`)).toBe('malformed');
    expect(await reason(newApiKey('AAAAAAAAAAAA'))).toBe('unknown_key');
    expect(await reason(newApiKey(view.id))).toBe('wrong_secret');
    expect(await reason('not-a-key')).toBe('wrong_token');
    expect(await reason('')).toBe('missing');
  });

  it('keeps the old key for the rotation grace (24 h by default), then only the new one', async () => {
    const { key: old, view } = await store.addKey('acme', { user: 'al' });
    const { key: fresh } = await store.rotateKey(view.id);
    expect(await reason(old)).toBe('ok');
    expect(await reason(fresh)).toBe('ok');
    clock += 24 * 3600 * 1000 - 1000;
    expect(await reason(old)).toBe('ok');
    clock += 2000;
    expect(await reason(old)).toBe('wrong_secret');
    expect(await reason(fresh)).toBe('ok');
    const { key: third } = await store.rotateKey(view.id, { grace_s: 0 });
    expect(await reason(fresh)).toBe('wrong_secret');
    expect(await reason(third)).toBe('ok');
  });

  it('stops a key at its expiry, at its revocation, and when its user goes', async () => {
    const { key: expiring } = await store.addKey('acme', { user: 'al', expires_at: new Date(clock + 60_000).toISOString() });
    expect(await reason(expiring)).toBe('ok');
    clock += 60_000;
    expect(await reason(expiring)).toBe('expired');
    const { key, view } = await store.addKey('acme', { user: 'al' });
    await store.revokeKey(view.id);
    expect(await reason(key)).toBe('revoked');
    await store.addUser('acme', { id: 'bo', role: 'member' });
    const { key: bos } = await store.addKey('acme', { user: 'bo' });
    await store.removeUser('acme', 'bo');
    expect(await reason(bos)).toBe('revoked');
  });

  it('writes last_used_at in batches, not per request', async () => {
    const { key, view } = await store.addKey('acme', { user: 'al' });
    const before = await store.mtime();
    for (let i = 0; i < 20; i++) await auth.authenticate(key);
    expect(await store.mtime()).toBe(before);
    expect((await store.getKey(view.id)).last_used_at).toBeNull();
    await auth.flushUse();
    expect((await store.getKey(view.id)).last_used_at).toBe(new Date(clock).toISOString());
  });
});
