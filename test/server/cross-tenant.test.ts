/**
 * Tenant isolation, tested by doing the attack: tenant B's key on tenant A's ids is 404 and A's runs
 * are absent from B's lists, for every route of the server's route table (a route without a tenant
 * policy fails this test); fuzzed keys are 401; tenant_id in a body is refused unless the owner acts
 * for a tenant (audited); a revoked key's open stream is closed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import WebSocket from 'ws';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { policyOf } from '../../src/server/route-policies.js';
import { tenancyOf } from '../../src/server/tenant-guard.js';
import { AuditLog } from '../../src/tenants/audit-log.js';
import { FakeRunService } from './fake-run-service.js';

const TOKEN = 'cross-tenant-server-token-0123456789abcdef';
let server: RunningServer;
let service: RunService;
let dataDir = '';
let keyA = '';
let keyAId = '';
let keyB = '';
let runA = '';

async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON (a stream, a file)
  }
  return { status: res.status, text, json };
}

/** Every route the server has, as registered. */
function routeTable(): Array<{ method: string; url: string }> {
  return tenancyOf(server.app)!.routes;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'runtrail-tenants-'));
  const plugin = createTextOnlyPlugin({ name: 'talk', description: 'any input', inputSchema: z.object({}).passthrough(), offlineAnswer: 'hi' });
  service = new RunService({ env: {}, agents: [plugin], dataDir });
  // the fuzzing below fails 200 sign-ins from one address: the limit is raised here, tested on its own below
  server = await startServer({ service, port: 0, dataDir, env: {}, token: TOKEN, signIn: { perAddress: 10_000, perKeyId: 10_000 } });
  for (const t of ['a', 'b']) expect((await call('POST', '/api/tenants', TOKEN, { id: t })).status).toBe(201);
  expect((await call('POST', '/api/tenants/a/users', TOKEN, { id: 'alice', role: 'admin' })).status).toBe(201);
  expect((await call('POST', '/api/tenants/b/users', TOKEN, { id: 'bob', role: 'admin' })).status).toBe(201);
  const a = await call('POST', '/api/keys', TOKEN, { tenant: 'a', user: 'alice' });
  const b = await call('POST', '/api/keys', TOKEN, { tenant: 'b', user: 'bob' });
  expect(a.status).toBe(201);
  [keyA, keyAId, keyB] = [a.json.key, a.json.id, b.json.key];
  const created = await call('POST', '/api/runs', keyA, { plugin: 'talk', goal: 'tenant a', input: {} });
  expect(created.status, created.text).toBe(201);
  runA = created.json.run_id;
  await service.wait(runA);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await service?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('cross-tenant matrix (from the route table)', () => {
  it('gives every route a policy, and B’s key on A’s ids is 404 / 403, never A’s data', async () => {
    const routes = routeTable();
    expect(routes.length).toBeGreaterThan(30);
    const missing = routes.filter((r) => !policyOf(r.method, r.url)).map((r) => `${r.method} ${r.url}`);
    expect(missing, `routes without a tenant policy:\n${missing.join('\n')}`).toEqual([]);
    const wrong: string[] = [];
    for (const { method, url } of routes) {
      const policy = policyOf(method, url)!;
      if (policy.kind === 'public') continue;
      const path = url
        .replace(':id', url.startsWith('/api/keys') ? keyAId : url.startsWith('/api/schedules') ? 'sch_none' : runA)
        .replace(':t', 'a')
        .replace(':user', 'alice')
        .replace(':approval', 'ap_x')
        .replace(':name', 'x')
        .replace('*', 'report.md');
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      if (policy.kind === 'runs' && method === 'POST') continue; // B's own run: below
      if (url === '/api/keys' && method === 'POST') continue; // B's own key
      const r = await call(method, path, keyB, body);
      const expected = policy.kind === 'owner' ? 403 : policy.kind === 'run' || policy.kind === 'tenant' || url.startsWith('/api/keys/') ? 404 : 200;
      if (r.status !== expected) wrong.push(`${method} ${path}: ${r.status} (expected ${expected}) ${r.text.slice(0, 120)}`);
      // a list or a self-description never holds A's things; B's audit log holds B's own lines (its tries on A's ids among them)
      if (url === '/api/audit') {
        const others = (r.json.entries as Array<{ tenant: string }>).filter((e) => e.tenant !== 'b');
        if (others.length) wrong.push(`${method} ${path} shows another tenant's lines`);
      } else if (r.status === 200 && (r.text.includes(runA) || r.text.includes(keyAId) || r.text.includes('alice')))
        wrong.push(`${method} ${path} shows tenant a's data`);
    }
    expect(wrong, wrong.join('\n')).toEqual([]);
  }, 60_000);

  it('answers B’s WebSocket on A’s run as for a run that does not exist (close 4404), and A’s own streams', async () => {
    const open = (key: string) =>
      new Promise<{ first: string; code: number }>((resolve, reject) => {
        const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/runs/${runA}/ws?after=0`, { headers: { authorization: `Bearer ${key}` } });
        let first = '';
        ws.on('message', (m) => (first ||= String(m)));
        ws.on('close', (code) => resolve({ first, code }));
        ws.on('error', reject);
      });
    const b = await open(keyB);
    expect(b.code).toBe(4404);
    expect(JSON.parse(b.first).error.code).toBe('not_found');
    const a = await open(keyA);
    expect(a.code).toBe(1000);
    expect(a.first).toContain('"data"');
  });

  it('lists each tenant its own runs only; the owner sees all', async () => {
    const b = await call('POST', '/api/runs', keyB, { plugin: 'talk', goal: 'tenant b', input: {} });
    expect(b.status).toBe(201);
    const ids = async (key: string) => ((await call('GET', '/api/runs', key)).json.runs as Array<{ run_id: string }>).map((r) => r.run_id);
    expect(await ids(keyA)).toEqual([runA]);
    expect(await ids(keyB)).toEqual([b.json.run_id]);
    expect(await ids(TOKEN)).toEqual(expect.arrayContaining([runA, b.json.run_id]));
    expect((await call('GET', `/api/runs/${b.json.run_id}`, keyB)).json.tenant_id).toBe('b');
    expect((await call('GET', `/api/runs/${b.json.run_id}`, keyA)).status).toBe(404);
  });

  it('refuses tenant_id in a body unless the owner acts for a tenant, which is audited', async () => {
    const r = await call('POST', '/api/runs', keyB, { plugin: 'talk', input: {}, tenant_id: 'a' });
    expect(r.status).toBe(400);
    expect(r.json.error.details.issues[0].path).toBe('tenant_id');
    const unknown = await call('POST', '/api/runs', TOKEN, { plugin: 'talk', input: {}, tenant_id: 'zzz' });
    expect(unknown.status).toBe(400);
    const acted = await call('POST', '/api/runs', TOKEN, { plugin: 'talk', input: {}, tenant_id: 'a' });
    expect(acted.status).toBe(201);
    expect((await call('GET', `/api/runs/${acted.json.run_id}`, keyA)).json.tenant_id).toBe('a');
    const audit = await call('GET', '/api/audit?action=owner', TOKEN);
    expect(audit.json.entries).toEqual([
      expect.objectContaining({ action: 'owner.act_as', tenant: 'a', actor: { tenant: 'default', user: 'operator', key_id: null } }),
    ]);
  });

  it('answers fuzzed keys 401 (a bad checksum refused without a lookup), and audits B’s try on A’s run', async () => {
    for (let n = 0; n < 200; n++) {
      const i = 3 + randomInt(keyB.length - 3);
      const c = keyB[i] === 'x' ? 'y' : keyB[i] === '_' ? '-' : 'x';
      const fuzzed = keyB.slice(0, i) + c + keyB.slice(i + 1);
      const r = await call('GET', '/api/runs', fuzzed);
      expect(r.status, fuzzed).toBe(401);
      expect(r.text).not.toContain(fuzzed);
    }
    await call('GET', `/api/runs/${runA}/events`, keyB);
    const audit = new AuditLog(dataDir);
    const foreign = await audit.read((l) => l.action === 'access.foreign_id' && l.target === `GET /api/runs/${runA}/events`);
    expect(foreign.at(-1)?.actor).toMatchObject({ tenant: 'b', user: 'bob' });
    expect((await audit.read((l) => l.action === 'auth.failed')).length).toBeGreaterThanOrEqual(200);
    expect(await audit.verify()).toMatchObject({ problem: null });
    expect(JSON.stringify(await audit.read())).not.toContain(keyB);
  });

  it('shows a key its identity at /api/me, and lets a member manage only its own keys', async () => {
    expect((await call('GET', '/api/me', keyA)).json).toMatchObject({ tenant: 'a', user: 'alice', role: 'admin', key_id: keyAId });
    expect((await call('POST', '/api/tenants/a/users', keyA, { id: 'mo', role: 'member' })).status).toBe(201);
    expect((await call('POST', '/api/tenants/a/users', keyA, { id: 'mo2', role: 'owner' })).json.error.details.issues[0].path).toBe('role');
    const mo = await call('POST', '/api/keys', keyA, { user: 'mo', scopes: ['runs:read'] });
    expect(mo.status).toBe(201);
    // the member's key cannot make a key with more than it has, nor one for alice, nor see alice's keys
    expect((await call('POST', '/api/keys', mo.json.key, { scopes: ['runs:write'] })).status).toBe(400);
    expect((await call('POST', '/api/keys', mo.json.key, { user: 'alice' })).status).toBe(403);
    expect((await call('POST', `/api/keys/${keyAId}/revoke`, mo.json.key)).status).toBe(404);
    expect(((await call('GET', '/api/keys', mo.json.key)).json.keys as Array<{ id: string }>).map((k) => k.id)).toEqual([mo.json.id]);
    expect((await call('POST', '/api/runs', mo.json.key, { plugin: 'talk', input: {} })).status).toBe(403);
    expect((await call('GET', '/api/audit', mo.json.key)).status).toBe(403);
    // no answer ever holds a hash
    expect((await call('GET', '/api/keys', TOKEN)).text).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe('key revocation and live streams', () => {
  it('closes a stream opened with a key within a second of the key being revoked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runtrail-tenants-stream-'));
    const fake = new FakeRunService();
    fake.scriptFor = () => ({ deltas: ['one', 'two'], pauseAfter: 1 });
    const s = await startServer({ service: fake, port: 0, dataDir: dir, env: {}, token: TOKEN });
    try {
      const post = (path: string, key: string, body: unknown) =>
        fetch(`${s.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
      await post('/api/tenants', TOKEN, { id: 'a' });
      await post('/api/tenants/a/users', TOKEN, { id: 'alice', role: 'member' });
      const key = (await post('/api/keys', TOKEN, { tenant: 'a', user: 'alice' })).json;
      const run = (await post('/api/runs', key.key, { plugin: 'echo', input: {} })).json;
      const res = await fetch(`${s.url}/api/runs/${run.run_id}/events`, { headers: { authorization: `Bearer ${key.key}` } });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('one')) seen += new TextDecoder().decode((await reader.read()).value);
      const revokedAt = Date.now();
      expect((await post(`/api/keys/${key.id}/revoke`, TOKEN, {})).status).toBe(200);
      // the run is paused: only the revocation can end this stream
      for (;;) {
        const r = await reader.read().catch(() => ({ done: true }));
        if (r.done) break;
      }
      expect(Date.now() - revokedAt).toBeLessThan(1500);
      expect(fake.runs.get(run.run_id)?.status.status).not.toBe('completed');
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});

describe('failed sign-ins', () => {
  it('are limited per address and per key id: 429 with Retry-After, then even a right key waits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runtrail-tenants-signin-'));
    const s = await startServer({ service: new FakeRunService(), port: 0, dataDir: dir, env: {}, token: TOKEN, signIn: { perAddress: 5, perKeyId: 3 } });
    const get = (key: string) => fetch(`${s.url}/api/me`, { headers: { authorization: `Bearer ${key}` } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await get(`wrong-token-${i}`)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      const limited = await get(TOKEN);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('too_many_failed_sign_ins');
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
