/** Tenants, users and keys in the data dir: bad input refused naming the field, owner-only files, no hash shown. */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IdentityError } from '../../src/tenants/identity-error.js';
import { identityFilePath, IdentityStore } from '../../src/tenants/identity-store.js';

let dir = '';
let store: IdentityStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-identity-'));
  store = new IdentityStore(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<{ status: number; field: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof IdentityError) return { status: e.status, field: e.field, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('IdentityStore', () => {
  it('has tenant default before anyone makes it, and refuses a duplicate or malformed tenant id (400, field id)', async () => {
    expect((await store.listTenants()).map((t) => t.id)).toEqual(['default']);
    await store.addTenant({ id: 'acme', name: 'Acme' });
    expect(await refusal(store.addTenant({ id: 'acme' }))).toMatchObject({ status: 400, field: 'id' });
    expect(await refusal(store.addTenant({ id: 'default' }))).toMatchObject({ status: 400, field: 'id' });
    expect(await refusal(store.addTenant({ id: 'Bad Id' }))).toMatchObject({ status: 400, field: 'id' });
    expect((await store.listTenants()).map((t) => t.id)).toEqual(['default', 'acme']);
  });

  it('refuses an unknown role, an owner outside default, an unknown scope, a scope above the role and a past expiry, creating nothing', async () => {
    await store.addTenant({ id: 'acme' });
    expect(await refusal(store.addUser('acme', { id: 'al', role: 'boss' }))).toMatchObject({ status: 400, field: 'role' });
    expect(await refusal(store.addUser('acme', { id: 'al', role: 'owner' }))).toMatchObject({ status: 400, field: 'role' });
    expect(await refusal(store.addUser('nope', { id: 'al' }))).toMatchObject({ status: 404, field: 'tenant' });
    await store.addUser('acme', { id: 'vi', role: 'viewer' });
    expect(await refusal(store.addKey('acme', { user: 'vi', scopes: ['runs:read', 'runs:delete'] }))).toMatchObject({ status: 400, field: 'scopes[1]' });
    const above = await refusal(store.addKey('acme', { user: 'vi', scopes: ['runs:write'] }));
    expect(above).toMatchObject({ status: 400, field: 'scopes[0]' });
    expect(above.message).toContain('above the user');
    expect(await refusal(store.addKey('acme', { user: 'vi', expires_at: '2001-01-01T00:00:00Z' }))).toMatchObject({ status: 400, field: 'expires_at' });
    expect(await refusal(store.addKey('acme', { user: 'ghost' }))).toMatchObject({ status: 404, field: 'user' });
    expect(await store.listKeys()).toEqual([]);
    expect((await store.listUsers('acme')).map((u) => u.id)).toEqual(['vi']);
  });

  it('will not remove the last owner (409), and revokes a removed user’s keys', async () => {
    await store.addUser('default', { id: 'root', role: 'owner' });
    expect(await refusal(store.removeUser('default', 'root'))).toMatchObject({ status: 409, field: 'user' });
    await store.addUser('default', { id: 'root2', role: 'owner' });
    const k = await store.addKey('default', { user: 'root' });
    await store.removeUser('default', 'root');
    expect((await store.getKey(k.view.id)).revoked_at).not.toBeNull();
    expect(await refusal(store.removeUser('default', 'root2'))).toMatchObject({ status: 409 });
  });

  it('keeps its file owner-only and never the key text; views carry no hash', async () => {
    await store.addTenant({ id: 'acme' });
    await store.addUser('acme', { id: 'al', role: 'admin' });
    const made = await store.addKey('acme', { user: 'al', name: 'ci' });
    const file = identityFilePath(dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'tenants')).mode & 0o777).toBe(0o700);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(made.key);
    expect(text).not.toContain(made.key.slice(16, 48));
    expect(JSON.stringify(made.view)).not.toMatch(/[0-9a-f]{64}/);
    expect(made.view.scopes).toContain('admin');
  });
});
