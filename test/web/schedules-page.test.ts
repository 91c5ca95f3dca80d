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

  it('keeps the runs list in the wide column beside schedules; buttons styled, chips said once; a schedule removed from the page', async () => {
    const id = (await postJson(`${stack.url}/api/schedules`, { agent: 'talk', every: '1h', goal: 'wide goal that should not be cut' })).body
      .schedule_id as string;
    const fired = (await postJson(`${stack.url}/api/schedules/${id}/run`, {})).body;
    await stack.service.wait(fired.run_id);
    const page = await browser!.ctx.newPage();
    await page.goto(`${stack.url}/#/`);
    const row = page.locator(`[data-schedule="${id}"]`);
    await row.getByRole('link', { name: fired.run_id }).waitFor({ timeout: 30_000 });
    // the runs list is beside the form (its own column), not below it in the narrow one
    const form = (await page.locator('form').first().boundingBox())!;
    const runs = (await page.locator('section.runs').boundingBox())!;
    expect(runs.x).toBeGreaterThan(form.x + form.width);
    expect(runs.width).toBeGreaterThan(form.width * 1.5);
    // a fire that started a run: its link, then one chip with the run's status
    const chip = row.getByTestId('fire-chip').first();
    expect(await chip.textContent()).toBe('completed');
    expect(await row.locator('.fires li').first().textContent()).not.toMatch(/\b(\w+) \1\b/);
    // no button on the page is the browser's unstyled default
    // (the page's code as text: this file is compiled without the DOM's types)
    const unstyled = (await page.evaluate(`[...document.querySelectorAll('button')]
      .filter((b) => getComputedStyle(b).borderStyle.includes('outset') || getComputedStyle(b).backgroundColor === 'rgb(239, 239, 239)')
      .map((b) => b.textContent)`)) as string[];
    expect(unstyled).toEqual([]);
    await page.screenshot({ path: join(out, 'home-with-schedules.png'), fullPage: true });
    // remove: asked once more, then gone from the page and the server
    await row.getByRole('button', { name: 'Remove…' }).click();
    await row.getByTestId('confirm-remove').getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(async () => (await stack.triggers.list()).some((x) => x.schedule_id === id), { timeout: 10_000 }).toBe(false);
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
    await page.close();
  }, 60_000);
});
