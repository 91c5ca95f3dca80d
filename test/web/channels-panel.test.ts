/**
 * The page's chat channels panel: each channel's state, counters and last error from GET
 * /api/channels, on a real server with a Telegram channel against our fake Bot API and one whose
 * service is away; nothing at all on a server without channels.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelRows } from '../../web/src/channel-rows.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { FakeTelegram } from '../channels/fakes/fake-telegram.js';
import { project, scriptAgent, startHarness, type Harness } from '../channels/channel-harness.js';
import { launchBrowser, type TestBrowser } from './browser.js';

const ROW = {
  name: 'telegram',
  type: 'telegram',
  state: 'connected',
  connected: true,
  last_error: null,
  last_error_at: null,
  messages_in: 1200,
  messages_out: 3,
  edits: 40,
  duplicates: 0,
  refused: 2,
  retries: 0,
  failures: 0,
  live_replies: 1,
};

describe('the chat channels rows', () => {
  it('name, state as a pill, counters, and the last error with its time', () => {
    expect(channelRows([ROW])).toEqual([
      { name: 'telegram', state: 'connected', tone: 'ok', counts: '1,200 in · 3 out · 40 edits · 1 replying now · 2 refused', error: null },
    ]);
    expect(
      channelRows([
        {
          ...ROW,
          name: 'away',
          connected: false,
          state: 'disconnected',
          last_error: 'cannot start: ECONNREFUSED',
          last_error_at: '2026-01-02T03:04:05.000Z',
          refused: 0,
          live_replies: 0,
        },
      ])[0],
    ).toMatchObject({ name: 'away (telegram)', state: 'disconnected', tone: 'fail', error: 'cannot start: ECONNREFUSED (03:04:05)' });
    expect(channelRows([{ ...ROW, connected: false, state: 'starting' }])[0]).toMatchObject({ state: 'connecting', tone: 'wait' });
  });
});

describe('the chat channels panel', () => {
  let tg: FakeTelegram;
  let h: Harness;
  let server: RunningServer;
  let browser: TestBrowser | undefined;

  beforeAll(async () => {
    tg = new FakeTelegram();
    await tg.start();
    const p = project({
      '.runtrail/channels.json': JSON.stringify({
        telegram: { token: '${TG}', api_root: tg.url, allow_from: [555], poll_timeout_s: 1 },
        away: { type: 'telegram', token: '${TG}', api_root: 'http://127.0.0.1:9', allow_from: [555] },
      }),
      ...scriptAgent('chat', [{ text: 'Hi.' }]),
    });
    h = await startHarness(p, { TG: tg.token });
    server = await startServer({ service: h.service, port: 0, env: {}, dataDir: h.dataDir, channels: h.host });
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await h?.stop();
    h?.p.cleanup();
    await tg?.stop();
  });

  it('shows each channel with its state and counters; the one whose service is away says why', async () => {
    tg.userMessage({ chatId: 555, from: 555, text: 'hello' });
    const page = await browser!.ctx.newPage();
    await page.goto(server.url);
    const telegram = page.locator('[data-channel="telegram"]');
    await telegram.getByText('connected').waitFor({ timeout: 30_000 });
    await telegram.getByText(/^1 in · 1 out/).waitFor({ timeout: 30_000 });
    const away = page.locator('[data-channel="away (telegram)"]');
    await away.getByText(/cannot start: .*ECONNREFUSED/).waitFor({ timeout: 30_000 });
    expect(await page.locator('.channels').innerText()).not.toContain(tg.token.split(':')[1]);
    await page.close();
  });

  it('a server without channels shows no panel', async () => {
    const plain = await startServer({ service: h.service, port: 0, env: {}, dataDir: join(h.dataDir, 'other') });
    const page = await browser!.ctx.newPage();
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/channels'));
    await page.goto(plain.url);
    expect(await (await answered).json()).toEqual({ channels: [] });
    await page.getByText(/Runs/).first().waitFor();
    expect(await page.locator('.channels').count()).toBe(0);
    await page.close();
    await plain.close();
  });
});
