/** The API token: weak ones are refused at start, and a token parameter is read decoded both when it is checked and when it is logged. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/server/api-token.js';
import { startServer } from '../../src/server/start-server.js';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer } from './helpers.js';

const TOKEN = 'tok-5f2b8c1d9e4a7b3c6d0e1f2a3b4c5d6e';

describe('a weak RUNTRAIL_API_TOKEN', () => {
  it.each([
    [' ', /1 character long/],
    ['a', /1 character long/],
    ['short-but-not-24-chars', /22 characters long; it must be at least 24/],
    ['a'.repeat(40), /repeats a few characters/],
    [` ${TOKEN} `, /spaces at its ends/],
  ])('%j is refused at start, with a line saying how to make one', async (token, why) => {
    const service = new FakeRunService();
    const start = startServer({ service, host: '0.0.0.0', port: 0, env: { RUNTRAIL_API_TOKEN: token } });
    await expect(start).rejects.toThrow(why);
    await expect(start).rejects.toThrow(/openssl rand -hex 32/);
    if (token.trim().length > 3) await expect(start).rejects.not.toThrow(token.trim());
  });

  it('a strong one starts the server on any interface', async () => {
    const s = await startServer({ service: new FakeRunService(), host: '0.0.0.0', port: 0, env: { RUNTRAIL_API_TOKEN: TOKEN } });
    await s.close();
  });
});

describe('?access_token= under an encoded name', () => {
  it('authenticates as the router reads it, and is redacted from the request log', async () => {
    let out = '';
    const stream = new Writable({
      write(chunk, _enc, cb) {
        out += String(chunk);
        cb();
      },
    });
    const server = await startTestServer(new FakeRunService(), { token: TOKEN, logger: pino({ level: 'info' }, stream) });
    try {
      expect((await fetch(`${server.url}/api/runs?%61ccess%5f%74oken=${TOKEN}&limit=5`)).status).toBe(200);
      expect((await fetch(`${server.url}/api/runs?limit=5&%61ccess%5F%74oken=wrong-${TOKEN}`)).status).toBe(401);
      expect((await fetch(`${server.url}/api/runs?access%5ftoken=${encodeURIComponent(TOKEN)}`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(out).toContain('"url":"/api/runs?%61ccess%5f%74oken=[redacted]&limit=5"');
    expect(out).toContain('"url":"/api/runs?limit=5&%61ccess%5F%74oken=[redacted]"');
    expect(out).not.toContain(TOKEN);
  });

  it('redactUrl decodes names (and + for spaces) and keeps the rest', () => {
    expect(redactUrl('/x?a=1&%61ccess_token=abc&b=2#h')).toBe('/x?a=1&%61ccess_token=[redacted]&b=2#h');
    expect(redactUrl('/x?%74oken=abc')).toBe('/x?%74oken=[redacted]');
    expect(redactUrl('/x?access-token=abc&tokens=3')).toBe('/x?access-token=[redacted]&tokens=3');
    expect(redactUrl('/x?bad=%E0%A4%A&access_token=abc')).toBe('/x?bad=%E0%A4%A&access_token=[redacted]');
    expect(redactUrl('/api/runs')).toBe('/api/runs');
  });
});
