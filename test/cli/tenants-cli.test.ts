/**
 * `runtrail tenants|users|keys|audit|login` on a data dir: bad input exits 2 naming the field, a new key
 * is printed once and works against a server on that data dir, a revoked one stops, the changes are
 * audited and `audit verify` names an edited line; login keeps the key owner-only.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { startServer } from '../../src/server/start-server.js';
import { auditPaths } from '../../src/tenants/audit-log.js';
import { FakeRunService } from '../server/fake-run-service.js';

let dir = '';
let home = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-tenants-cli-'));
  home = mkdtempSync(join(tmpdir(), 'runtrail-tenants-home-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stream = (add: (s: string) => void) => ({ write: (s: string) => (add(s), true), isTTY: false, columns: 100 });
  const code = await runCli([...args, '--data-dir', dir], {
    agents: [],
    stdout: stream((s) => (out += s)),
    stderr: stream((s) => (err += s)),
    env: { HOME: home },
    cwd: dir,
  });
  return { code, out, err };
}

describe('runtrail tenants, users, keys, audit', () => {
  it('adds a tenant, a user and a key; refuses bad input with exit 2 naming the field', async () => {
    expect((await cli('tenants', 'add', 'acme', '--name', 'Acme')).code).toBe(0);
    const dup = await cli('tenants', 'add', 'acme');
    expect(dup.code).toBe(2);
    expect(dup.err).toContain('id: tenant acme already exists');
    expect((await cli('users', 'add', 'al', '--tenant', 'acme', '--role', 'boss')).err).toMatch(/^runtrail: role: must be one of owner, admin, member, viewer/);
    expect((await cli('users', 'add', 'al', '--tenant', 'acme', '--role', 'viewer')).code).toBe(0);
    const above = await cli('keys', 'add', '--tenant', 'acme', '--user', 'al', '--scope', 'runs:write');
    expect(above.code).toBe(2);
    expect(above.err).toContain('scopes[0]: runs:write is above the user');
    expect((await cli('keys', 'add', '--tenant', 'acme', '--user', 'al', '--expires', '2000-01-01T00:00:00Z')).err).toContain('expires_at:');
    const made = await cli('keys', 'add', '--tenant', 'acme', '--user', 'al', '--name', 'ci');
    expect(made.code).toBe(0);
    const key = made.out.trim();
    expect(key).toMatch(/^rt_\w{12}_\w{38}$/);
    const list = await cli('keys', 'list', '--tenant', 'acme');
    expect(list.out).toContain(key.slice(3, 15));
    expect(list.out).not.toContain(key);
    expect((await cli('tenants', 'list')).out).toMatch(/default[\s\S]*acme/);
    await cli('users', 'add', 'root', '--role', 'owner');
    const last = await cli('users', 'rm', 'root');
    expect(last.code).toBe(2);
    expect(last.err).toContain('root is the last owner');
  });

  it('makes a key that a server on the data dir takes; revoked, it is 401; the changes are audited and verified', async () => {
    await cli('tenants', 'add', 'acme');
    await cli('users', 'add', 'al', '--tenant', 'acme', '--role', 'member');
    const key = (await cli('keys', 'add', '--tenant', 'acme', '--user', 'al')).out.trim();
    const keyId = key.slice(3, 15);
    const server = await startServer({ service: new FakeRunService(), port: 0, dataDir: dir, env: {}, token: 'cli-test-server-token-0123456789abcdef' });
    try {
      const me = await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${key}` } });
      expect(await me.json()).toMatchObject({ tenant: 'acme', user: 'al', role: 'member' });
      const login = await cli('login', '--server', server.url, '--key', key);
      expect(login.code, login.err).toBe(0);
      const cred = join(home, '.config', 'runtrail', 'credentials.json');
      expect(statSync(cred).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(cred, 'utf8'))).toMatchObject({ key, key_id: keyId, tenant: 'acme' });
      expect((await cli('login', '--key', `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).code).toBe(2);
      expect((await cli('keys', 'revoke', keyId)).code).toBe(0);
      // the server sees the CLI's revocation within its refresh (500 ms)
      let status = 200;
      for (let i = 0; i < 50 && status !== 401; i++) {
        status = (await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${key}` } })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(401);
      expect((await cli('login', '--server', server.url, '--key', key)).code).toBe(1);
    } finally {
      await server.close();
    }
    const audit = await cli('audit', 'list');
    const actions = audit.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).action);
    expect(actions).toEqual(expect.arrayContaining(['tenant.created', 'user.created', 'key.created', 'key.revoked', 'auth.failed']));
    expect(audit.out).not.toContain(key);
    const ok = await cli('audit', 'verify');
    expect(ok.code).toBe(0);
    const file = auditPaths(dir).log;
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    lines[1] = lines[1].replace('"user.created"', '"user.removed"');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const bad = await cli('audit', 'verify');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('line 2 (seq 2) was edited');
  });
});
