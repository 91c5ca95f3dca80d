/** Schedules on the page: the home page lists them with their runs; a run a schedule started says so, with its webhooks. */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from './browser.js';
import { postJson } from '../server/helpers.js';
import { Receiver } from '../triggers/receiver.js';
import { removeDir, startStack, type Stack } from '../triggers/helpers.js';

const out = resolve('test-output');
let stack: Stack;
let receiver: Receiver;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  receiver = await new Receiver().start();
  receiver.answers = [500, 200];
  stack = await startStack({
    config: { webhooks: { allow: [`http://127.0.0.1:${receiver.port}/*`], retry: { base: '100ms', max_interval: '1s', for: '1m' } } },
  });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.stop();
  removeDir(stack?.dataDir ?? '');
});

describe('schedules on the page', () => {
  it('lists a schedule with the run it started; the run shows its trigger and its webhook attempts', async () => {
    const id = (await postJson(`${stack.url}/api/schedules`, { agent: 'talk', every: '1h', goal: 'report', webhook: { url: receiver.url() } })).body
      .schedule_id as string;
    const fired = (await postJson(`${stack.url}/api/schedules/${id}/run`, {})).body;
    await stack.service.wait(fired.run_id);
    const page = await browser!.ctx.newPage();
    await page.goto(`${stack.url}/#/`);
    const row = page.locator(`[data-schedule="${id}"]`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain('every 1h');
    await row.getByRole('link', { name: fired.run_id }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(out, 'schedules-list.png'), fullPage: true });
    await row.getByRole('link', { name: fired.run_id }).click();
    await page.waitForURL(new RegExp(`#/runs/${fired.run_id}$`));
    await expect.poll(() => page.getByTestId('trigger').textContent(), { timeout: 10_000 }).toContain(`Started by schedule ${id}`);
    const hooks = page.getByTestId('webhooks');
    await expect.poll(async () => (await hooks.textContent().catch(() => '')) ?? '', { timeout: 15_000 }).toMatch(/delivered.*run\.completed.*2 attempts/);
    expect(await hooks.textContent()).toContain('HTTP 500');
    await page.screenshot({ path: join(out, 'run-webhooks.png'), fullPage: true });
    // pause from the page
    await page.goto(`${stack.url}/#/`);
    await page.locator(`[data-schedule="${id}"]`).getByRole('button', { name: 'Pause' }).click();
    await expect.poll(async () => (await stack.triggers.get(id)).enabled, { timeout: 10_000 }).toBe(false);
    await page.close();
  }, 60_000);
});
