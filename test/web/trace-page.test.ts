/**
 * The run page's trace view and metrics panel in a real browser (Debian chromium through playwright-core):
 * the waterfall fills in while the run goes, its bars open their steps, and the metrics read as figures.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { launchBrowser, type TestBrowser } from './browser.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { tracePlugin, traceTurns } from '../fixtures/trace-plugin.js';

const out = resolve('test-output');
let server: RunningServer;
let service: RunService;
let ctx: BrowserContext;
let dataDir = '';
let browser: TestBrowser | undefined;

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'runtrail-trace-page-'));
  service = new RunService({
    dataDir,
    agents: [tracePlugin({ toolMs: 900 })],
    env: {},
    // slow enough to watch live: each model call waits, each tool takes most of a second
    providerResolver: () => createScriptProvider(traceTurns(700)),
    backoffMs: () => 300,
  });
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

describe('the run page trace view', () => {
  it("draws model calls, tool and MCP calls as bars live, opens a bar's step on click, and shows metrics as figures", async () => {
    const res = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'tracer', input: {} }),
    });
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const page = await ctx.newPage();
    await page.goto(`${server.url}/#/runs/${runId}`);
    const wf = page.getByTestId('waterfall');

    // live: a bar that is still going is drawn as running, and grows
    const running = wf.locator('.wf-bar.running').first();
    await running.waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('run-status').textContent()).not.toBe('completed');
    await expect.poll(() => wf.locator('.kind-tool').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await page.screenshot({ path: join(out, 'trace-live.png'), fullPage: true });

    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 60_000 }).toBe('completed');
    await expect.poll(() => wf.locator('.wf-bar.running').count(), { timeout: 10_000 }).toBe(0);
    // one row per span: the run, four model calls (the first one failed and was retried), three tool calls
    const rows = wf.locator('.wf-row');
    expect(await rows.count()).toBe(8);
    expect(await wf.locator('.kind-model').count()).toBe(4);
    expect(await wf.locator('.kind-model.wf-error').count()).toBe(1);
    expect(await wf.locator('.kind-mcp .wf-name').textContent()).toBe('files · read_file');
    expect(await wf.locator('.kind-tool.wf-error .wf-name').textContent()).toBe('flaky');
    // every bar says how long it took; model calls their tokens
    for (const dur of await wf.locator('.wf-dur').allTextContents()) expect(dur).toMatch(/^(<1 ms|\d+(\.\d+)? (ms|s))$/);
    expect(await wf.locator('.kind-model:not(.wf-error) .wf-tok').count()).toBe(3);
    // bars sit on one axis in time order: the MCP call starts after the lookup ends
    const lookupBar = await wf.locator('.kind-tool .wf-bar').first().boundingBox();
    const mcpBar = await wf.locator('.kind-mcp .wf-bar').boundingBox();
    expect(mcpBar!.x).toBeGreaterThanOrEqual(lookupBar!.x + lookupBar!.width - 2);

    // a tool bar opens its step in Steps
    await wf.locator('.kind-mcp').click();
    const step = page.locator('.step.focused');
    await step.waitFor();
    expect(await step.locator('.name').textContent()).toBe('read_file');
    await step.locator('.step-body').waitFor();
    expect(await page.getByTestId('waterfall-detail').textContent()).toContain('tools/call read_file');
    // a model bar shows its figures
    await wf.locator('.kind-model:not(.wf-error)').first().click();
    const detail = page.getByTestId('waterfall-detail');
    await expect.poll(() => detail.textContent()).toMatch(/Tokens.*\d+ in · \d+ out/);
    expect(await detail.textContent()).toContain('Finish');
    await page.screenshot({ path: join(out, 'trace-done.png'), fullPage: true });

    // the metrics are figures, not a JSON tree
    const metrics = page.getByTestId('metrics');
    await metrics.waitFor();
    expect(await page.locator('section:has(h3:text("Metrics")) .jrow').count()).toBe(0);
    const headline = Object.fromEntries(
      await metrics.locator('.headline > div').evaluateAll((els) => els.map((e) => [e.querySelector('dt')!.textContent, e.querySelector('dd')!.textContent])),
    ) as Record<string, string>;
    expect(headline['Tool calls']).toBe('3 (1 failed)');
    expect(headline.Retries).toBe('1 model retry');
    expect(headline['Model calls']).toBe('4');
    expect(headline.Duration).toMatch(/^\d+(\.\d+)? s$/);
    const stages = await metrics.locator('.stage-list .stage-name').allTextContents();
    expect(stages).toEqual(expect.arrayContaining(['Model', 'Tools']));
    const tools = await metrics
      .locator('.tool-table tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(tools.map((t) => t[0]).sort()).toEqual(['flaky', 'lookup', 'mcp__files__read_file']);
    await metrics.screenshot({ path: join(out, 'metrics-panel.png') });

    // phone width: the bars go under their labels and nothing overflows
    await page.setViewportSize({ width: 390, height: 844 });
    await wf.scrollIntoViewIfNeeded();
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(1);
    await wf.screenshot({ path: join(out, 'trace-phone.png') });
    await page.close();
  }, 120_000);
});
