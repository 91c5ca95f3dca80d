/** Request logs never show the API token, though GET requests may carry it as ?access_token=. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/server/start-server.js';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer } from './helpers.js';

describe('request logs', () => {
  it('redact ?access_token= from the logged URL', async () => {
    let out = '';
    const stream = new Writable({
      write(chunk, _enc, cb) {
        out += String(chunk);
        cb();
      },
    });
    const server = await startTestServer(new FakeRunService(), { token: 's3cret-T0KEN-0123456789abcdef', logger: pino({ level: 'info' }, stream) });
    try {
      expect((await fetch(`${server.url}/api/runs?access_token=s3cret-T0KEN-0123456789abcdef&limit=5`)).status).toBe(200);
      expect((await fetch(`${server.url}/api/runs?limit=5&access_token=guess-Gu3ss`)).status).toBe(401);
    } finally {
      await server.stop();
    }
    expect(out).toContain('"url":"/api/runs?access_token=[redacted]&limit=5"');
    expect(out).toContain('"url":"/api/runs?limit=5&access_token=[redacted]"');
    expect(out).not.toContain('s3cret-T0KEN');
    expect(out).not.toContain('guess-Gu3ss');
  });

  it('redactUrl keeps everything else', () => {
    expect(redactUrl('/api/runs/x/ws?after=3&access_token=abc#f')).toBe('/api/runs/x/ws?after=3&access_token=[redacted]#f');
    expect(redactUrl('/api/runs?ACCESS_TOKEN=abc')).toBe('/api/runs?ACCESS_TOKEN=[redacted]');
    expect(redactUrl('/api/runs?status=completed')).toBe('/api/runs?status=completed');
  });
});
