/**
 * The run page on a long run, in Debian's chromium: its waterfall, its steps and a long call's messages
 * scroll in boxes of their own and draw only the rows in view, the axis lines up with the bars, the last
 * call is reached by scrolling and opens, a bar's step is brought into view and opened, and an opened
 * step stays open when it is scrolled away and back.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from './browser.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import type { Agent } from '../../src/runtime/agent.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';

const TURNS = 400;
const out = resolve('test-output');
let server: RunningServer;
let service: RunService;
let browser: TestBrowser | undefined;
let dir = '';
let runId = '';

const lookup: AnyToolDefinition = {
  name: 'lookup',
  description: 'Looks up one page of notes.',
  parameters: z.object({ page: z.number().int() }),
  execute: async (a: { page: number }) => ({ ok: true, content: `page ${a.page}: notes` }),
};
const reader: Agent = {
  ...createTextOnlyPlugin({ name: 'reader', description: 'reads many pages', offlineAnswer: 'x' }),
  createTools: () => [lookup],
  limits: { max_iterations: TURNS + 5, max_tool_calls: TURNS + 5, timeout_s: 600 },
};

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'runtrail-long-run-'));
  service = new RunService({
    dataDir: dir,
    agents: [reader],
    env: {},
    inputRoots: 'any',
    processRegistry: null,
    // a lookup each turn (a different page each: no repeated-call guard), then the answer
    providerResolver: () =>
      createScriptProvider([
        ...Array.from({ length: TURNS - 1 }, (_, i) => ({ text: `Page ${i}.`, toolCalls: [{ name: 'lookup', args: { page: i } }] })),
        { text: 'All pages read.' },
      ]),
  });
  server = await startServer({ service, port: 0, env: {} });
  browser = await launchBrowser();
  const r = await service.create({ plugin: 'reader', input: {} });
  const s = await service.wait(r.run_id);
  expect(s.status).toBe('completed');
  runId = r.run_id;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openRun(): Promise<Page> {
  const page = await browser!.ctx.newPage();
  await page.goto(`${server.url}/#/runs/${runId}`);
  await page.locator('[data-bar="model:1.0"]').waitFor();
  await page.locator('[data-turn="model:1.0"]').waitFor();
  return page;
}

describe('a run of 400 model calls', () => {
  it('draws the rows in view of its waterfall and steps, each list in a box of its own with the axis lined up', async () => {
    const page = await openRun();
    const waterfall = page.getByTestId('waterfall').getByTestId('long-list');
    const steps = page.locator('section:has(h3:text("Steps")) [data-testid="long-list"]');
    // the run, 400 model calls and 399 tool calls; the steps: 399 tool steps and 400 turns
    expect(await waterfall.getAttribute('aria-label')).toBe('spans (800, scrolls)');
    expect(await steps.getAttribute('aria-label')).toBe('steps (799, scrolls)');
    const drawnBars = await waterfall.locator('.wf-row').count();
    const drawnSteps = await steps.locator('.step').count();
    expect(drawnBars).toBeGreaterThan(10);
    expect(drawnBars).toBeLessThan(80);
    expect(drawnSteps).toBeGreaterThan(10);
    expect(drawnSteps).toBeLessThan(80);
    // the boxes are no taller than the window: what follows them stays near
    expect((await waterfall.boundingBox())!.height).toBeLessThanOrEqual(900 * 0.7 + 1);
    // the axis keeps the room of the box's scroll bar: its track spans the same x as the bars' tracks
    const axis = (await page.locator('.wf-axis .wf-track').boundingBox())!;
    const track = (await waterfall.locator('.wf-track').first().boundingBox())!;
    expect(Math.abs(axis.x - track.x)).toBeLessThanOrEqual(1);
    expect(Math.abs(axis.width - track.width)).toBeLessThanOrEqual(1);
    await page.screenshot({ path: join(out, 'long-run.png'), fullPage: true });

    // scrolled to its end, the waterfall draws the last call's bar, and a click opens the call
    await waterfall.evaluate((box) => box.scrollTo(0, box.scrollHeight));
    await page.locator(`[data-bar="model:${TURNS}.0"]`).click();
    await page.getByTestId('call-messages').waitFor();
    expect(await page.locator('.call-view h4').first().textContent()).toBe(`Request: ${2 * TURNS - 1} message(s)`);
    // its 799 messages scroll in a box of their own too; at the end, the last lookup's result
    const messages = page.getByTestId('call-view').getByTestId('long-list');
    expect(await messages.locator('.call-msg').count()).toBeLessThan(80);
    await messages.evaluate((box) => box.scrollTo(0, box.scrollHeight));
    await expect.poll(() => messages.locator('.call-msg').last().textContent()).toContain(`page ${TURNS - 2}: notes`);
    expect(await waterfall.locator('[data-bar="model:1.0"]').count()).toBe(0);
    await page.close();
  });

  it("brings a bar's step into view and opens it; an opened step is still open after scrolling away and back", async () => {
    const page = await openRun();
    const waterfall = page.getByTestId('waterfall').getByTestId('long-list');
    const steps = page.locator('section:has(h3:text("Steps")) [data-testid="long-list"]');
    // the last lookup's bar: its step is far down the steps, not drawn until asked for
    await waterfall.evaluate((box) => box.scrollTo(0, box.scrollHeight));
    const lastTool = waterfall.locator('.wf-row.kind-tool').last();
    await lastTool.click();
    const focused = steps.locator('.step.focused');
    await focused.waitFor();
    expect(await focused.getAttribute('data-step-index')).toBe(String(TURNS - 2));
    await focused.locator('.step-body').waitFor();
    expect(await focused.locator('.step-body').textContent()).toContain(`page ${TURNS - 2}: notes`);
    // in view: inside its box, and the box's part of it inside the window
    await expect
      .poll(async () => {
        const row = (await focused.boundingBox())!;
        const box = (await steps.boundingBox())!;
        return row.y >= box.y - 1 && row.y < box.y + box.height && row.y >= 0 && row.y < page.viewportSize()!.height;
      })
      .toBe(true);

    // scrolled away, the step is no longer drawn; back, it is drawn open as it was left
    await steps.evaluate((box) => box.scrollTo(0, 0));
    await expect.poll(() => steps.locator(`[data-step-index="${TURNS - 2}"]`).count()).toBe(0);
    await steps.evaluate((box) => box.scrollTo(0, box.scrollHeight));
    const again = steps.locator(`[data-step-index="${TURNS - 2}"]`);
    await again.waitFor();
    expect(await again.locator('.step-head').getAttribute('aria-expanded')).toBe('true');
    await page.close();
  });
});
