import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent } from '../../src/runtime/agent.js';
import { buildServer, startServer } from '../../src/server/start-server.js';
import { FakeRunService } from './fake-run-service.js';
import { getJson, postJson, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const filesPlugin = {
  name: 'files',
  version: '1.0.0',
  description: 'reads a file',
  inputSchema: z.object({ csv_path: z.string(), max_rows: z.number().int().optional() }).strict(),
  fileInputs: ['csv_path'],
  defaultSkill: null,
  defaultGoal: 'read it',
  promptFragments: [],
  createTools: () => [],
  plan: [],
  artifacts: [{ path: 'report.md', type: 'markdown', audience: 'user', sensitivity: 'public', description: 'r', required: true }],
  validators: [],
  offlineProcedure: () => ({ text: 'ok' }),
} as unknown as Agent;

describe('run API', () => {
  it('creates a run (201 with run_id, status and links), shows, lists with filters and pages', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const c = await postJson(`${server.url}/api/runs`, { plugin: 'echo', goal: 'g', input: {} });
    expect(c.status).toBe(201);
    expect(c.body.run_id).toMatch(/^run_/);
    expect(c.body.status).toBe('queued');
    expect(c.body.links.events).toBe(`/api/runs/${c.body.run_id}/events`);
    await service.wait(c.body.run_id);
    await postJson(`${server.url}/api/runs`, { plugin: 'chat', goal: 'g2', input: {} });
    const one = await getJson(`${server.url}/api/runs/${c.body.run_id}`);
    expect(one.body.status).toBe('completed');
    const byPlugin = await getJson(`${server.url}/api/runs?plugin=chat`);
    expect(byPlugin.body.runs.map((r: { plugin: string }) => r.plugin)).toEqual(['chat']);
    const paged = await getJson(`${server.url}/api/runs?limit=1&offset=1`);
    expect(paged.body.total).toBe(2);
    expect(paged.body.runs).toHaveLength(1);
    const bad = await getJson(`${server.url}/api/runs?status=sleeping`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('status');
    expect(bad.body.error).toMatchObject({ code: 'invalid_query', message: expect.stringMatching(/^query parameter status must be one of queued\|/) });
    const tooMany = await getJson(`${server.url}/api/runs?limit=900`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: 'invalid_query', message: 'query parameter limit must be a whole number in 1..500, got "900"' });
  });

  it('names the agent as `agent`, or as `plugin` (its older name), and refuses two different ones', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const byAgent = await postJson(`${server.url}/api/runs`, { agent: 'echo', goal: 'g', input: {} });
    expect(byAgent.status).toBe(201);
    expect((await getJson(`${server.url}/api/runs/${byAgent.body.run_id}`)).body.plugin).toBe('echo');
    expect((await postJson(`${server.url}/api/runs`, { plugin: 'chat', goal: 'g', input: {} })).status).toBe(201);
    expect((await postJson(`${server.url}/api/runs`, { agent: 'chat', plugin: 'chat', input: {} })).status).toBe(201);
    const both = await postJson(`${server.url}/api/runs`, { agent: 'echo', plugin: 'chat', input: {} });
    expect(both.status).toBe(400);
    expect(both.body.error.details.issues).toEqual([{ path: 'agent', message: 'agent "echo" and plugin "chat" differ' }]);
    const none = await postJson(`${server.url}/api/runs`, { goal: 'g', input: {} });
    expect(none.status).toBe(400);
    expect(none.body.error.details.issues[0]).toMatchObject({ path: 'agent', message: expect.stringContaining('required') });
    const unknown = await postJson(`${server.url}/api/runs`, { agent: 'nope', input: {} });
    expect(unknown.status).toBe(404);
    expect((await getJson(`${server.url}/api/runs?agent=echo`)).body.runs.map((r: { plugin: string }) => r.plugin)).toEqual(['echo']);
  });

  it('maps every refusal to a JSON error with the issue-5 status', async () => {
    const service = new FakeRunService();
    service.maxRuns = 2;
    server = await startTestServer(service, { agents: [filesPlugin] });
    const u = server.url;
    const cases: Array<[string, Promise<{ status: number; body: any }>, number, string]> = [
      ['not an object', postJson(`${u}/api/runs`, [1, 2]), 400, 'invalid_request'],
      ['bad JSON', postJson(`${u}/api/runs`, '{"plugin":'), 400, 'invalid_request'],
      ['missing plugin', postJson(`${u}/api/runs`, { input: {} }), 400, 'invalid_request'],
      ['unknown plugin', postJson(`${u}/api/runs`, { plugin: 'nope', input: {} }), 404, 'unknown_plugin'],
      ['incompatible skill', postJson(`${u}/api/runs`, { plugin: 'echo', skill: 'wrong', input: {} }), 422, 'incompatible'],
      ['file input outside the roots', postJson(`${u}/api/runs`, { plugin: 'files', input: { csv_path: '/etc/passwd' } }), 400, 'input_outside_roots'],
      ['unknown run', getJson(`${u}/api/runs/run_missing`), 404, 'not_found'],
      ['script model over HTTP', postJson(`${u}/api/runs`, { plugin: 'echo', input: {}, model: 'script:/etc/passwd' }), 400, 'invalid_request'],
      [
        'script model as object',
        postJson(`${u}/api/runs`, { plugin: 'echo', input: {}, model: { provider: 'Script', model: 'x.json' } }),
        400,
        'invalid_request',
      ],
      ['unknown route', getJson(`${u}/api/nothing`), 404, 'not_found'],
      ['body over 1 MB', postJson(`${u}/api/runs`, { plugin: 'echo', input: { big: 'x'.repeat(1024 * 1024 + 10) } }), 413, 'body_too_large'],
    ];
    for (const [name, p, status, code] of cases) {
      const r = await p;
      expect({ name, status: r.status, code: r.body?.error?.code }).toEqual({ name, status, code });
      expect(typeof r.body.error.message).toBe('string');
      expect(r.body.error.details).toBeTypeOf('object');
    }
    const outside = await postJson(`${u}/api/runs`, { plugin: 'files', input: { csv_path: '/etc/passwd' } });
    expect(outside.body.error.details.issues[0].path).toBe('input.csv_path');
    const missing = await postJson(`${u}/api/runs`, { input: {} });
    expect(missing.body.error.details.issues[0].path).toBe('agent');

    const a = await postJson(`${u}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(a.body.run_id);
    const again = await postJson(`${u}/api/runs/${a.body.run_id}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('wrong_state');
    await postJson(`${u}/api/runs`, { plugin: 'echo', input: {} });
    const full = await postJson(`${u}/api/runs`, { plugin: 'echo', input: {} });
    expect(full.status).toBe(429);
    expect(full.body.error.code).toBe('queue_full');
  });

  it('cancels a live run explicitly', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: ['a', 'b'], pauseAfter: 1 });
    server = await startTestServer(service);
    const c = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await new Promise((r) => setTimeout(r, 20));
    const r = await postJson(`${server.url}/api/runs/${c.body.run_id}/cancel`, {});
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('cancelled');
  });

  it('never answers a fuzzed body with a 5xx', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { agents: [filesPlugin] });
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const atoms: unknown[] = [null, true, 0, -1, 1e308, '', 'x', '../../etc/passwd', '\u0000', 'echo', 'files', 'chat', [], {}, '🙂'.repeat(50)];
    const value = (d: number): unknown => {
      const k = rnd(d > 2 ? 3 : 5);
      if (k === 0)
        return Object.fromEntries(
          Array.from({ length: rnd(4) }, () => [
            ['plugin', 'input', 'goal', 'model', 'limits', 'skill', 'conversation_id', 'csv_path', '__proto__', 'constructor'][rnd(10)],
            value(d + 1),
          ]),
        );
      if (k === 1) return Array.from({ length: rnd(4) }, () => value(d + 1));
      return atoms[rnd(atoms.length)];
    };
    const bodies: string[] = [];
    for (let i = 0; i < 150; i++) {
      const v = value(0);
      const s = JSON.stringify(v) ?? 'null';
      bodies.push(i % 5 === 0 ? s.slice(0, rnd(s.length + 1)) : s);
    }
    bodies.push(
      '{"plugin":"files","input":{"csv_path":{"a":1}}}',
      '{"plugin":"echo","input":{},"limits":{"max_iterations":-5}}',
      '\u0000\u0001',
      '{{{{',
      '"str"',
      '9'.repeat(400),
    );
    const targets = ['/api/runs', '/api/im/messages', '/api/uploads', `/api/runs/run_x/cancel`];
    for (const b of bodies) {
      for (const t of targets) {
        const res = await fetch(`${server.url}${t}`, {
          method: 'POST',
          headers: { 'content-type': rnd(4) === 0 ? 'text/plain' : 'application/json' },
          body: b,
        });
        expect({ b, t, status: res.status }).toEqual({ b, t, status: expect.any(Number) });
        expect(res.status, `${t} ${b}`).toBeLessThan(500);
        await res.arrayBuffer();
      }
    }
  });

  it('requires the bearer token on everything but /healthz when one is set', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { token: 's3cret-0123456789abcdefghij' });
    expect((await getJson(`${server.url}/healthz`)).status).toBe(200);
    for (const path of ['/api/runs', '/api/plugins', '/metrics', '/api/runs/run_x/events']) {
      const r = await getJson(`${server.url}${path}`);
      expect(r.status, path).toBe(401);
      expect(r.body.error?.code ?? 'unauthorized').toBe('unauthorized');
    }
    // encoded paths route to the same handlers, so they must not slip past the check
    for (const path of ['/%61pi/runs', '/%6detrics', '/api/runs/run_x/%65vents']) {
      expect((await getJson(`${server.url}${path}`)).status, path).toBe(401);
    }
    expect((await getJson(`${server.url}/api/runs`, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} })).status).toBe(401);
    expect((await getJson(`${server.url}/api/runs`, { authorization: 'Bearer s3cret-0123456789abcdefghij' })).status).toBe(200);
    expect((await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} }, { authorization: 'Bearer s3cret-0123456789abcdefghij' })).status).toBe(201);
  });

  it('refuses to listen beyond loopback without a token, and says why', async () => {
    const service = new FakeRunService();
    await expect(startServer({ service, host: '0.0.0.0', port: 0, env: {} })).rejects.toThrow(/RUNTRAIL_API_TOKEN/);
    await expect(startServer({ service, host: '::', port: 0, env: {} })).rejects.toThrow(/refusing to listen on ::/);
    const s = await startServer({ service, host: '0.0.0.0', port: 0, env: { RUNTRAIL_API_TOKEN: 'guard-token-0123456789abcdef' } });
    await s.close();
  });

  it('stores uploads under <dataDir>/uploads with safe names and returns a usable path; too large → 413', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { agents: [filesPlugin], uploadLimitBytes: 1000 });
    const fd = new FormData();
    fd.append('file', new Blob(['id,text\n1,hello\n']), '../../evil name;.csv');
    const res = await fetch(`${server.url}/api/uploads`, { method: 'POST', body: fd });
    expect(res.status).toBe(201);
    const { path } = (await res.json()) as { path: string };
    expect(path.startsWith(join(server.dataDir, 'uploads') + '/')).toBe(true);
    expect(path).toMatch(/_evil_name_\.csv$/);
    expect(readFileSync(path, 'utf8')).toBe('id,text\n1,hello\n');
    const run = await postJson(`${server.url}/api/runs`, { plugin: 'files', input: { csv_path: path } });
    expect(run.status).toBe(201);

    const big = new FormData();
    big.append('file', new Blob(['x'.repeat(5000)]), 'big.csv');
    const tooBig = await fetch(`${server.url}/api/uploads`, { method: 'POST', body: big });
    expect(tooBig.status).toBe(413);
    // the refusal says which setting raises the limit
    expect(((await tooBig.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'file_too_large',
      message: expect.stringMatching(/^upload is larger than the limit \(\d+ bytes\); the server's config\.json "uploads": \{ "max_file_bytes" \} raises it$/),
    });
    expect(readdirSync(join(server.dataDir, 'uploads'))).toHaveLength(1);
    const notMultipart = await postJson(`${server.url}/api/uploads`, { file: 'x' });
    expect(notMultipart.status).toBe(400);
  });

  it('serves only artifacts the manifest lists, and none outside the run', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const c = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(c.body.run_id);
    const dir = join(server.dataDir, 'runs', c.body.run_id, 'artifacts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'report.md'), '# Report\n');
    writeFileSync(join(dir, 'secret.md'), 'no');
    service.documents.set(`${c.body.run_id}/artifacts/report.md`, join(dir, 'report.md'));
    const ok = await fetch(`${server.url}/api/runs/${c.body.run_id}/artifacts/report.md`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(await ok.text()).toBe('# Report\n');
    const dl = await fetch(`${server.url}/api/runs/${c.body.run_id}/artifacts/report.md?download=1`);
    expect(dl.headers.get('content-disposition')).toBe('attachment; filename="report.md"');
    await dl.text();
    for (const p of ['secret.md', '..%2F..%2Fmanifest.json', '%2Fetc%2Fpasswd', '..%2Fruntime%2Fevents.jsonl']) {
      const r = await getJson(`${server.url}/api/runs/${c.body.run_id}/artifacts/${p}`);
      expect(r.status, p).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const m = await getJson(`${server.url}/api/runs/${c.body.run_id}/manifest`);
    expect(m.status).toBe(200);
    expect(m.body.run_id).toBe(c.body.run_id);
  });

  it('exposes /healthz, /metrics (Prometheus text), /api/plugins with input JSON Schemas, /api/skills', async () => {
    const service = new FakeRunService();
    const skillsDir = mkdtempSync(join(tmpdir(), 'runtrail-skills-'));
    mkdirSync(join(skillsDir, 'demo'), { recursive: true });
    writeFileSync(join(skillsDir, 'demo', 'skill.json'), JSON.stringify({ name: 'demo', version: '1.0.0', compatible_plugins: ['files'] }));
    writeFileSync(join(skillsDir, 'demo', 'SKILL.md'), 'Do the demo.\n');
    // an Agent Skill (SKILL.md with frontmatter) is listed too; a folder that cannot load is not
    mkdirSync(join(skillsDir, 'notes-style'));
    writeFileSync(join(skillsDir, 'notes-style', 'SKILL.md'), '---\nname: notes-style\ndescription: How notes are written\n---\nShort lines.\n');
    mkdirSync(join(skillsDir, 'broken'));
    writeFileSync(join(skillsDir, 'broken', 'SKILL.md'), '---\nname: broken\n---\nno description\n');
    server = await startTestServer(service, { agents: [filesPlugin], skillsDir });
    const c = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(c.body.run_id);
    expect((await getJson(`${server.url}/healthz`)).body).toEqual({ ok: true });
    const m = await fetch(`${server.url}/metrics`);
    expect(m.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await m.text();
    expect(text).toContain('# TYPE runtrail_runs gauge');
    expect(text).toMatch(/^runtrail_runs\{state="completed"\} 1$/m);
    expect(text).toMatch(/^runtrail_queue_depth 0$/m);
    expect(text).toMatch(/^runtrail_sse_clients 0$/m);
    expect(text).toMatch(/^runtrail_events_published_total \d+$/m);
    const p = await getJson(`${server.url}/api/plugins`);
    const files = p.body.plugins[0];
    expect(files.name).toBe('files');
    expect(files.fileInputs).toEqual(['csv_path']);
    expect(files.inputSchema.properties.csv_path.type).toBe('string');
    expect(files.inputSchema.required).toEqual(['csv_path']);
    const s = await getJson(`${server.url}/api/skills`);
    expect(s.body.skills.map((k: { folder: string; format: string; compatible_plugins: string[] }) => [k.folder, k.format, k.compatible_plugins])).toEqual([
      ['demo', 'skill.json', ['files']],
      ['notes-style', 'agent-skill', ['*']],
    ]);
    expect(s.body.errors).toEqual([{ name: 'broken', message: expect.stringContaining('description: is required') }]);
    rmSync(skillsDir, { recursive: true, force: true });
  });

  it('buildServer gives a Fastify instance for inject tests', async () => {
    const app = await buildServer({ service: new FakeRunService(), env: {} });
    const r = await app.inject({ method: 'GET', url: '/healthz' });
    expect(r.statusCode).toBe(200);
    await app.close();
  });
});
