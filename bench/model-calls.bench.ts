/**
 * Model-call recording figures:
 *  1. its cost: a 1,000-turn scripted run (a tool call each turn, growing conversation) with
 *     capture.model_io on against the same run with it off, alternated (goal ≤ 1.10×);
 *  2. the run page on a 2,000-call run: from opening the page to its waterfall and steps drawn (the
 *     rows in view: long lists draw no more), and from scrolling the waterfall to its end to the last
 *     turn's call opened (Debian's chromium through playwright-core).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { chromium } from 'playwright-core';
import { createTextOnlyPlugin } from '../src/plugins/text-only-plugin.js';
import { createScriptProvider } from '../src/providers/script-provider.js';
import type { Agent } from '../src/runtime/agent.js';
import { MODEL_CALLS_FILE } from '../src/runtime/model-calls/model-call-record.js';
import { RunService } from '../src/runtime/service/run-service.js';
import { startServer } from '../src/server/start-server.js';
import type { AnyToolDefinition } from '../src/tools/tool.js';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const lookup: AnyToolDefinition = {
  name: 'lookup',
  description: 'Looks up one page of notes.',
  parameters: z.object({ page: z.number().int() }),
  execute: async (a: { page: number }) => ({ ok: true, content: `page ${a.page}: ${'note text '.repeat(8)}` }),
};

/** `turns` model calls: a lookup each (different pages: no repeated-call guard), then an answer. */
function scripted(turns: number) {
  return createScriptProvider([
    ...Array.from({ length: turns - 1 }, (_, i) => ({ text: `Looking at page ${i}.`, toolCalls: [{ name: 'lookup', args: { page: i } }] })),
    { text: 'All pages read.' },
  ]);
}

function agent(name: string, modelIo: boolean, turns: number): Agent {
  return {
    ...createTextOnlyPlugin({ name, description: name, offlineAnswer: 'x' }),
    createTools: () => [lookup],
    limits: { max_iterations: turns + 5, max_tool_calls: turns + 5, timeout_s: 3_600 },
    capture: { model_io: modelIo },
  };
}

async function recordingCost(turns: number, rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-calls-'));
  const on = agent('recorded', true, turns);
  const off = agent('unrecorded', false, turns);
  const service = new RunService({
    dataDir: dir,
    agents: [on, off],
    inputRoots: 'any',
    env: {},
    processRegistry: null,
    providerResolver: () => scripted(turns),
  });
  const once = async (name: string) => {
    const t = performance.now();
    const r = await service.create({ plugin: name, input: {} });
    const s = await service.wait(r.run_id);
    if (s.status !== 'completed') throw new Error(`${name}: ${s.status} ${s.diagnosis?.summary ?? ''}`);
    const ms = performance.now() - t;
    const file = join(dir, 'runs', r.run_id, MODEL_CALLS_FILE);
    return { ms, bytes: existsSync(file) ? statSync(file).size : 0 };
  };
  try {
    await once('recorded');
    await once('unrecorded');
    const withCapture: number[] = [];
    const without: number[] = [];
    let bytes = 0;
    for (let i = 0; i < rounds; i++) {
      // alternated, each first half the time: neither side always runs on a warmer process
      const order = i % 2 ? ['unrecorded', 'recorded'] : ['recorded', 'unrecorded'];
      for (const name of order) {
        const r = await once(name);
        if (name === 'recorded') {
          withCapture.push(r.ms);
          bytes = r.bytes;
        } else without.push(r.ms);
      }
    }
    const a = median(withCapture);
    const b = median(without);
    console.log(
      `recording: ${turns}-turn scripted run, median of ${rounds}: capture on ${a.toFixed(0)} ms, off ${b.toFixed(0)} ms → ${(a / b).toFixed(3)}× (goal ≤ 1.10×); model_calls.jsonl ${(bytes / 1024).toFixed(0)} KB`,
    );
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pageTime(turns: number): Promise<void> {
  const chromiumPath = process.env.RUNTRAIL_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(chromiumPath)) {
    console.log(`page: skipped (no chromium at ${chromiumPath})`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-calls-page-'));
  const service = new RunService({
    dataDir: dir,
    agents: [agent('recorded', true, turns)],
    inputRoots: 'any',
    env: {},
    processRegistry: null,
    providerResolver: () => scripted(turns),
  });
  const server = await startServer({ service, port: 0, env: {}, logger: false });
  const ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'bench-chromium-')), {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
  });
  try {
    const r = await service.create({ plugin: 'recorded', input: {} });
    await service.wait(r.run_id);
    const shown: number[] = [];
    const opened: number[] = [];
    for (let i = 0; i < 3; i++) {
      const page = await ctx.newPage();
      const t = performance.now();
      await page.goto(`${server.url}/#/runs/${r.run_id}`);
      // the waterfall and the steps, with the first turn's rows
      await page.locator('[data-bar="model:1.0"]').waitFor({ timeout: 300_000 });
      await page.locator('[data-turn="model:1.0"]').waitFor({ timeout: 300_000 });
      shown.push(performance.now() - t);
      const c = performance.now();
      await page
        .getByTestId('waterfall')
        .getByTestId('long-list')
        .evaluate((box) => box.scrollTo(0, box.scrollHeight));
      await page.locator(`[data-bar="model:${turns}.0"]`).click({ timeout: 300_000 });
      await page.getByTestId('call-messages').waitFor({ timeout: 300_000 });
      opened.push(performance.now() - c);
      await page.close();
    }
    console.log(
      `page: a ${turns}-call run, median of 3: waterfall and steps drawn ${median(shown).toFixed(0)} ms after opening; the last call (${2 * turns - 1} messages) open ${median(opened).toFixed(0)} ms after scrolling to its bar`,
    );
  } finally {
    await ctx.close();
    await server.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await recordingCost(1_000, 5);
  await pageTime(2_000);
}
