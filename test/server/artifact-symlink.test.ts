/** GET /api/runs/:id/artifacts/* follows symlinks before confining: a link in artifacts/ serves nothing outside. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRunService } from './fake-run-service.js';
import { getJson, postJson, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
let outside = '';
afterEach(async () => {
  await server?.stop();
  server = null;
  if (outside) rmSync(outside, { recursive: true, force: true });
});

describe('artifact route and symlinks', () => {
  it('refuses a listed artifact that is a symlink out of artifacts/ (file or folder), serves real files', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const c = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(c.body.run_id);
    const id = c.body.run_id as string;
    const dir = join(server.dataDir, 'runs', id, 'artifacts');
    mkdirSync(join(dir, 'real'), { recursive: true });
    outside = mkdtempSync(join(tmpdir(), 'runtrail-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET');
    writeFileSync(join(dir, 'report.md'), '# Report\n');
    writeFileSync(join(dir, 'real', 'data.json'), '{}');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'leak.md'));
    symlinkSync(outside, join(dir, 'linked'));
    symlinkSync(join(server.dataDir, 'runs', id, 'runtime'), join(dir, 'rt'));
    for (const p of ['report.md', 'real/data.json', 'leak.md', 'linked/secret.txt', 'rt/events.jsonl']) {
      service.documents.set(`${id}/artifacts/${p}`, join(dir, p));
    }
    mkdirSync(join(server.dataDir, 'runs', id, 'runtime'), { recursive: true });
    writeFileSync(join(server.dataDir, 'runs', id, 'runtime', 'events.jsonl'), '{}\n');

    for (const p of ['leak.md', 'linked/secret.txt', 'rt/events.jsonl']) {
      const r = await getJson(`${server.url}/api/runs/${id}/artifacts/${p}`);
      expect(r.status, p).toBe(404);
      expect(JSON.stringify(r.body)).not.toContain('TOP SECRET');
    }
    const ok = await fetch(`${server.url}/api/runs/${id}/artifacts/report.md`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('# Report\n');
    const nested = await fetch(`${server.url}/api/runs/${id}/artifacts/real/data.json`);
    expect(nested.status).toBe(200);
    expect(await nested.text()).toBe('{}');
  });
});
