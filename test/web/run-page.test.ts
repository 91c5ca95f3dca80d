import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { launchBrowser, type TestBrowser } from './browser.js';
import { RunService, defaultProviderResolver } from '../../src/runtime/service/run-service.js';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import { readSse } from '../server/helpers.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';

const out = resolve('test-output');
let server: RunningServer;
let service: RunService;
let ctx: BrowserContext;
let dataDir = '';
let browser: TestBrowser | undefined;
const WORDS = Array.from({ length: 120 }, (_, i) => `w${i}`).join(' ');
const talkPlugin = createTextOnlyPlugin({ name: 'talk', description: 'streams a long answer slowly', offlineAnswer: 'hi' });
// `slowtalk` streams for about half a minute: long enough to look at and cancel from the page
const slowTalkPlugin = createTextOnlyPlugin({ name: 'slowtalk', description: 'streams a long answer slowly', offlineAnswer: 'slow' });

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'runtrail-page-'));
  // no skill folder needed here: the page is under test, not the skill
  service = new RunService({
    dataDir,
    agents: [{ ...createFeedbackLensPlugin(), defaultSkill: null }, talkPlugin, slowTalkPlugin],
    env: {},
    // `talk` streams slowly (a script model) so the page can lose its stream mid-run
    providerResolver: (spec, opts) =>
      opts.offlineProcedure === talkPlugin.offlineProcedure
        ? createScriptProvider([{ text: WORDS, chunkDelayMs: 25 }])
        : opts.offlineProcedure === slowTalkPlugin.offlineProcedure
          ? createScriptProvider([{ text: WORDS, chunkDelayMs: 250 }])
          : defaultProviderResolver(spec, opts),
  });
  // no dataDir: the server takes the service's own folder (uploads, plan files)
  server = await startServer({ service, port: 0, env: {} });
  browser = await launchBrowser();
  ctx = browser.ctx;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await service?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('web page', () => {
  it('starts a run from the generated form with a file upload, watches it complete, opens an artifact', async () => {
    const page = await ctx.newPage();
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) external.push(r.url());
    });
    const nav = await page.goto(server.url);
    expect(nav?.headers()['content-security-policy']).toContain("connect-src 'self'");
    await page.getByRole('heading', { name: 'New run' }).waitFor();
    await expect.poll(() => page.locator('select[name=plugin] option').allTextContents()).toEqual(['feedbacklens 1.0.0', 'slowtalk 1.0.0', 'talk 1.0.0']);
    // the form comes from the input schema: csv_path is a file input, max_rows a number
    await page.locator('input[type=file][name=csv_path]').setInputFiles(resolve('examples/feedback.csv'));
    expect(await page.locator('input[name=max_rows]').getAttribute('type')).toBe('number');
    await page.locator('input[name=product_name]').fill('TaskFlow Pro');
    await page.getByRole('button', { name: 'Start run' }).click();

    await page.waitForURL(/#\/runs\/run_/);
    const status = page.getByTestId('run-status');
    await expect.poll(() => status.textContent(), { timeout: 60_000 }).toBe('completed');
    // streamed text, steps with phase icons, the plan and artifacts are on the page
    await page.locator('.answer .md').waitFor();
    expect(await page.locator('.steps .step').count()).toBeGreaterThan(2);
    expect(await page.locator('.step.phase-ok').count()).toBeGreaterThan(0);
    // the status glyphs are read out as words, so a step's button is named "ok tool read_feedback_csv", not "✓ …"
    await page.getByRole('button', { name: 'ok tool read_feedback_csv' }).first().waitFor();
    expect(await page.getByRole('img', { name: 'completed' }).count()).toBeGreaterThan(0);
    expect(await page.getByLabel('API token').count()).toBe(1);
    await expect.poll(() => page.locator('.todos .todo').count()).toBeGreaterThan(0);
    await page.locator('button[data-artifact="artifacts/insight_report.md"]').click();
    const preview = page.getByTestId('artifact-preview');
    await preview.locator('.md h1, .md h2').first().waitFor();
    await page.screenshot({ path: join(out, 'run-page.png'), fullPage: true });

    await page.locator('button[data-artifact="artifacts/feedback_analysis.json"]').click();
    await preview.locator('.jrow').first().waitFor();
    expect(await preview.locator('.jkey').count()).toBeGreaterThan(3);
    await page.screenshot({ path: join(out, 'run-page-json.png'), fullPage: true });

    // phone width
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(out, 'run-page-phone.png'), fullPage: true });
    // a string: this file is type-checked without the DOM lib
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(1);

    // the run list shows it with its status
    await page.goto(`${server.url}/#/`);
    await page.locator('.run-list .pill.st-completed').first().waitFor();
    await page.screenshot({ path: join(out, 'home-phone.png'), fullPage: true });
    expect(external).toEqual([]);
    await page.close();
  }, 120_000);

  it('reconnects by itself with Last-Event-ID when its stream drops mid-run, without losing or repeating a frame', async () => {
    const page = await ctx.newPage();
    const res = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'talk', input: {} }),
    });
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const eventRequests: Array<string | undefined> = [];
    page.on('request', (r) => {
      if (r.url().endsWith(`/api/runs/${runId}/events`)) eventRequests.push(r.headers()['last-event-id']);
    });
    await page.goto(`${server.url}/#/runs/${runId}`);
    await expect.poll(() => page.locator('.answer .md').textContent(), { timeout: 30_000 }).toMatch(/w10\b/);
    // cut every open connection: the page must come back by itself
    server.app.server.closeAllConnections();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 60_000 }).toBe('completed');
    await expect.poll(async () => (await page.locator('.answer .md').textContent())?.trim()).toBe(WORDS);
    expect(eventRequests.length).toBeGreaterThanOrEqual(2);
    expect(eventRequests[0]).toBeUndefined();
    expect(Number(eventRequests[1])).toBeGreaterThan(0);
    // frames received across both connections = the frames of the run: no gap, no duplicate
    const all = await readSse(`${server.url}/api/runs/${runId}/events`);
    await expect.poll(() => page.locator('text=/\\d+ frames received/').textContent()).toBe(`${all.events.length} frames received`);
    await page.close();
  }, 120_000);
  it('a failed run reads: the stop-validation diagnosis keeps one problem per line, step names fit a phone', async () => {
    // a model that answers without writing any artifact: stop validation fails with several problems
    const script = join(dataDir, 'no-artifacts.json');
    writeFileSync(script, JSON.stringify([{ text: 'Users seem happy. No files written.' }]));
    mkdirSync(join(dataDir, 'uploads'), { recursive: true });
    const csv = join(dataDir, 'uploads', 'feedback-failed.csv');
    copyFileSync(resolve('examples/feedback.csv'), csv);
    // in-process, so the script model is allowed (HTTP refuses it)
    const run = await service.create({ plugin: 'feedbacklens', input: { csv_path: csv }, model: `script:${script}` });
    const page = await ctx.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/#/runs/${run.run_id}`);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 60_000 }).toBe('failed');
    const alert = page.locator('.answer [role=alert]');
    await alert.waitFor();
    // the detail's line breaks survive: each problem is a line of its own, not one run-on paragraph
    const lines = (await alert.innerText()).split('\n').map((l) => l.trim());
    expect(lines).toContain('required artifact insight_report.md was not created');
    expect(lines).toContain('required artifact feedback_analysis.json was not created');
    expect(await alert.textContent()).toContain('validation_failed');
    // the failing step's own diagnosis too
    await page.locator('.step.phase-fail .step-head').first().click();
    const stepLines = (await page.locator('.step-body .diagnosis').first().innerText()).split('\n').map((l) => l.trim());
    expect(stepLines.filter((l) => l.startsWith('- plan step')).length).toBeGreaterThan(1);
    // a step name is never broken mid-word to make room for its badge
    const nameBox = await page.locator('.step.phase-fail .step-head .name').first().boundingBox();
    expect(nameBox!.height).toBeLessThan(30);
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(1);
    await page.screenshot({ path: join(out, 'run-failed-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(out, 'run-failed.png'), fullPage: true });
    await page.close();
  }, 120_000);
  it('an unknown run id says so once, offers the way back and stops asking the server', async () => {
    const page = await ctx.newPage();
    let asked = 0;
    page.on('request', (r) => {
      if (r.url().includes('/api/runs/run_nope')) asked++;
    });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/#/runs/run_nope`);
    await page.getByRole('alert').filter({ hasText: 'No run with this id' }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect(await page.getByText('Waiting for the model').count()).toBe(0);
    // polling (1 s) and stream retries (2 s) would keep asking; a 404 is final
    const before = asked;
    await page.waitForTimeout(4500);
    expect(asked).toBe(before);
    expect(before).toBeLessThanOrEqual(3);
    await page.getByRole('link', { name: 'Back to the runs' }).click();
    await page.getByRole('heading', { name: 'New run' }).waitFor();
    await page.close();
  }, 60_000);
  it('at phone width a live run keeps its id on one line, cancels from the page, and the runs list lines up', async () => {
    const res = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'slowtalk', input: {} }),
    });
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const page = await ctx.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/#/runs/${runId}`);
    await expect.poll(() => page.locator('.answer .md').textContent(), { timeout: 30_000 }).toMatch(/w2\b/);
    const cancel = page.getByRole('button', { name: 'Cancel' });
    await cancel.waitFor();
    // the id is not squeezed into a narrow column beside the status pill and Cancel
    const idBox = await page.locator('h2.run-id').boundingBox();
    expect(idBox!.height).toBeLessThan(30);
    await page.screenshot({ path: join(out, 'run-live-phone.png'), fullPage: true });
    await cancel.click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('cancelled');
    await expect.poll(() => cancel.count()).toBe(0);
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(1);
    await page.screenshot({ path: join(out, 'run-cancelled-phone.png'), fullPage: true });

    // the list: the plugin name sits right after the status pill, the date on a line of its own
    await page.goto(`${server.url}/#/`);
    const item = page.locator(`button[data-run="${runId}"]`);
    await item.locator('.pill.st-cancelled').waitFor();
    const pill = await item.locator('.pill').boundingBox();
    const plugin = await item.locator('.plugin').boundingBox();
    expect(plugin!.x - (pill!.x + pill!.width)).toBeLessThan(20);
    await page.close();
  }, 120_000);
  it('the form will not send a run without its required file, and names each server problem once', async () => {
    const page = await ctx.newPage();
    let posts = 0;
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/api/runs')) posts++;
    });
    await page.goto(server.url);
    await expect.poll(() => page.locator('select[name=plugin] option').count()).toBeGreaterThan(0);
    // the form opens on the agent of the newest run (another test's): this one is about feedbacklens
    await page.locator('select[name=plugin]').selectOption('feedbacklens');
    const file = page.locator('input[type=file][name=csv_path]');
    expect(await file.getAttribute('required')).not.toBeNull();
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForTimeout(500);
    expect(posts).toBe(0);
    expect(await page.locator('input[type=file][name=csv_path]:invalid').count()).toBe(1);

    // with the file but a model the server refuses: the problem is listed, and only once
    await file.setInputFiles(resolve('examples/feedback.csv'));
    await page.locator('input[name=model]').fill('nosuchprovider:x');
    await page.getByRole('button', { name: 'Start run' }).click();
    const alert = page.locator('form [role=alert]');
    await alert.waitFor();
    const items = await alert.locator('li').allTextContents();
    expect(items.length).toBeGreaterThan(0);
    expect(items.filter((l) => l.includes('Unknown model provider "nosuchprovider"'))).toHaveLength(1);
    await page.close();
  }, 60_000);
  it('the runs list says it is loading until the server answers, never "No runs yet." before it knows', async () => {
    const page = await ctx.newPage();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/api/runs?limit=50*', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(server.url);
    await page.getByText('Loading runs…').waitFor();
    expect(await page.getByText('No runs yet.').count()).toBe(0);
    release();
    await expect.poll(() => page.getByText('Loading runs…').count()).toBe(0);
    await page.getByRole('heading', { name: /^Runs \(\d+\)$/ }).waitFor();
    // a filter nobody matches says so in its own words
    await page.getByLabel('filter by status').selectOption('queued');
    await page.getByText('No queued runs.').waitFor();
    await page.close();
  }, 60_000);
  it('on a server with a token, entering it in the page loads the form and the runs without a reload', async () => {
    const guarded = await startServer({ service, port: 0, env: { RUNTRAIL_API_TOKEN: 'page-secret-0123456789abcdef' } });
    const page = await ctx.newPage();
    try {
      await page.goto(guarded.url);
      await page.getByRole('alert').filter({ hasText: 'needs its API token' }).waitFor();
      expect(await page.getByRole('button', { name: 'Start run' }).isDisabled()).toBe(true);
      await page.locator('header summary').click();
      await page.getByLabel('API token').fill('page-secret-0123456789abcdef');
      await expect.poll(() => page.locator('select[name=plugin] option').count(), { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await page.getByRole('button', { name: 'Start run' }).isDisabled()).toBe(false);
      await page.getByRole('heading', { name: /^Runs \(\d+\)$/ }).waitFor({ timeout: 10_000 });
    } finally {
      await page.evaluate('localStorage.clear()');
      await page.close();
      await guarded.close();
    }
  }, 60_000);
  it('a running operation keeps counting its duration between events', async () => {
    const res = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'slowtalk', input: {} }),
    });
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const page = await ctx.newPage();
    try {
      await page.goto(`${server.url}/#/runs/${runId}`);
      const dur = page.locator('.op.status-running > .op-line .dur').first();
      await dur.waitFor({ timeout: 30_000 });
      const first = await dur.textContent();
      await expect.poll(() => dur.textContent(), { timeout: 5000 }).not.toBe(first);
    } finally {
      await page.close();
      await fetch(`${server.url}/api/runs/${runId}/cancel`, { method: 'POST' });
    }
  }, 60_000);
});
