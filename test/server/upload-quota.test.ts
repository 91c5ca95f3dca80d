/** One client cannot fill the disk with uploads: count and bytes per client address, and old uploads removed. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** POSTs one multipart file from `from` (a loopback address); resolves with the status and JSON body. */
function uploadFrom(url: string, from: string, name: string, content: string): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  const boundary = 'quota-boundary';
  const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n--${boundary}--\r\n`;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: Number(u.port),
        path: '/api/uploads',
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('upload quota per client', () => {
  it('refuses a client past its file count (429) while another client still uploads', async () => {
    server = await startTestServer(new FakeRunService(), { uploads: { maxFilesPerClient: 3 } });
    for (let i = 0; i < 3; i++) expect((await uploadFrom(server.url, '127.0.0.2', `f${i}.csv`, 'a,b\n1,2\n')).status).toBe(201);
    const fourth = await uploadFrom(server.url, '127.0.0.2', 'f3.csv', 'a,b\n1,2\n');
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.code).toBe('upload_quota');
    expect(fourth.body.error.message).toContain('127.0.0.2 already has 3 uploads on this server (at most 3)');
    expect(fourth.body.error.message).toContain(`the server's config.json "uploads": { "max_files_per_client" } raises it`);
    const other = await uploadFrom(server.url, '127.0.0.3', 'mine.csv', 'a,b\n1,2\n');
    expect(other.status).toBe(201);
    expect(other.body.path.startsWith(join(server.dataDir, 'uploads', '127.0.0.3') + '/')).toBe(true);
  });

  it('refuses a client past its bytes (413), counting what is stored; a file that would pass the quota is cut and not kept', async () => {
    server = await startTestServer(new FakeRunService(), { uploads: { maxBytesPerClient: 1000 } });
    expect((await uploadFrom(server.url, '127.0.0.2', 'a.csv', 'x'.repeat(600))).status).toBe(201);
    const over = await uploadFrom(server.url, '127.0.0.2', 'b.csv', 'y'.repeat(600));
    expect(over.status).toBe(413);
    expect(over.body.error.message).toContain('bytes left of 127.0.0.2');
    const cut = await uploadFrom(server.url, '127.0.0.2', 'c.csv', 'z'.repeat(500));
    expect(cut.status).toBe(413);
    expect(cut.body.error.message).toContain('larger than the 400 bytes left of 127.0.0.2');
    expect(cut.body.error.message).toContain(`the server's config.json "uploads": { "max_bytes_per_client" } raises it`);
    expect((await uploadFrom(server.url, '127.0.0.2', 'd.csv', 'z'.repeat(400))).status).toBe(201);
    const full = await uploadFrom(server.url, '127.0.0.2', 'e.csv', 'w');
    expect(full.status).toBe(413);
    expect(full.body.error.message).toContain('127.0.0.2 already has 1000 bytes');
    expect(
      readdirSync(join(server.dataDir, 'uploads', '127.0.0.2'))
        .map((n) => n.slice(13))
        .sort(),
    ).toEqual(['a.csv', 'd.csv']);
  });

  it('removes uploads older than the configured age, at start and while the server runs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runtrail-uploads-'));
    const oldFile = (name: string) => {
      const f = join(dataDir, 'uploads', '127.0.0.9', name);
      mkdirSync(join(dataDir, 'uploads', '127.0.0.9'), { recursive: true });
      writeFileSync(f, 'old');
      const past = (Date.now() - 120_000) / 1000;
      utimesSync(f, past, past);
      return f;
    };
    const before = oldFile('before.csv');
    server = await startTestServer(new FakeRunService(), { dataDir, uploads: { maxAgeMs: 2_000 } });
    for (let i = 0; i < 200 && existsSync(before); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(before)).toBe(false);
    const during = oldFile('during.csv');
    const fresh = await uploadFrom(server.url, '127.0.0.2', 'new.csv', 'new');
    expect(fresh.status).toBe(201);
    expect(existsSync(fresh.body.path)).toBe(true);
    for (let i = 0; i < 200 && existsSync(during); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(during)).toBe(false);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
