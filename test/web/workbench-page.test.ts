/**
 * The run page as a workbench, in Debian's chromium: a model call opened from the waterfall and from
 * the steps (what the turn added, what a compaction took out), steering a live run from its page, a
 * chat's runs as one conversation in a font that covers CJK, the runs list with its columns and
 * filters, two runs compared, and the defects people saw, each checked.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from './browser.js';
import { builtinPlugins } from '../../src/plugins/builtin-plugins.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import type { ProcedureState } from '../../src/providers/model-turn.js';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import type { Agent } from '../../src/runtime/agent.js';
import { RunService, defaultProviderResolver } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createReadFileTool } from '../../src/tools/read-file-tool.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';

const out = resolve('test-output');
let server: RunningServer;
let service: RunService;
let ctx: BrowserContext;
let dir = '';
let browser: TestBrowser | undefined;
const csv = resolve('examples/feedback.csv');

// `steerable` waits in its first tool call until the test lets it go: long enough to steer from the page
let release: () => void = () => undefined;
const waitTool: AnyToolDefinition = {
  name: 'wait_here',
  description: 'waits for the test',
  parameters: z.object({}),
  async execute() {
    await new Promise<void>((r) => {
      release = r;
      setTimeout(r, 60_000);
    });
    return { ok: true, content: 'waited' };
  },
};
const steerable: Agent = {
  ...createTextOnlyPlugin({ name: 'steerable', description: 'waits, then answers', offlineAnswer: 'x' }),
  createTools: () => [waitTool],
};
// `followable` waits too, then answers the last thing the user said: a follow-up gets an answer of its own
const followable: Agent = {
  ...createTextOnlyPlugin({ name: 'followable', description: 'waits, then answers the last user message', offlineAnswer: 'x' }),
  createTools: () => [waitTool],
  offlineProcedure: (s: ProcedureState) =>
    s.messages.some((m) => m.role === 'tool')
      ? { text: `answer to: ${s.messages.filter((m) => m.role === 'user').at(-1)?.content}` }
      : { toolCalls: [{ name: 'wait_here', args: {} }] },
};
const reader = createTextOnlyPlugin({ name: 'reader', description: 'reads a big file', offlineAnswer: 'x' });
const readerPlugin: Agent = {
  ...reader,
  fileInputs: ['file'],
  inputSchema: { type: 'object', properties: { file: { type: 'string' } } },
  createTools: (c) => [createReadFileTool({ files: c.workspace })],
};
const chatOff: Agent = {
  ...createTextOnlyPlugin({ name: 'private-chat', description: 'a chat that keeps no record of its model calls', offlineAnswer: 'noted' }),
  capture: { model_io: false },
};

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'runtrail-workbench-'));
  service = new RunService({
    dataDir: dir,
    agents: [...builtinPlugins(), steerable, followable, readerPlugin, chatOff],
    env: {},
    cwd: dir,
    inputRoots: 'any',
    processRegistry: null,
    providerResolver: (spec, opts) =>
      opts.offlineProcedure === steerable.offlineProcedure
        ? createScriptProvider([{ text: 'Waiting on purpose.', toolCalls: [{ name: 'wait_here', args: {} }] }, { text: 'Done, and shorter as you asked.' }])
        : defaultProviderResolver(spec, opts),
  });
  server = await startServer({ service, port: 0, env: {} });
  browser = await launchBrowser();
  ctx = browser.ctx;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function finished(req: Record<string, unknown>): Promise<string> {
  const r = await service.create(req);
  await service.wait(r.run_id);
  return r.run_id;
}

async function openRun(runId: string): Promise<Page> {
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  (page as Page & { errors: string[] }).errors = errors;
  await page.goto(`${server.url}/#/runs/${runId}`);
  await page.locator('.waterfall').waitFor();
  return page;
}

describe('the model call view', () => {
  it('opens from a model bar and from a turn in the steps: system prompt folded, messages with tool calls and results, what the turn added, the response and its figures', async () => {
    const runId = await finished({ plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'TaskFlow' } });
    const page = await openRun(runId);
    await page.locator('[data-bar="model:2.0"]').click();
    const view = page.getByTestId('call-view');
    await view.getByTestId('call-messages').waitFor();
    // the system prompt is there, folded
    expect(await view.locator('details.call-system').getAttribute('open')).toBeNull();
    expect(await view.locator('details.call-system summary').textContent()).toMatch(/System prompt \([\d,]+ characters\)/);
    // turn 2 was sent the goal, turn 1's tool call and its result; the call and the result are new since call 1
    const roles = await view.locator('[data-testid=call-messages] > li .call-role').allTextContents();
    expect(roles.map((r) => r.replace('new', ''))).toEqual(['user', 'assistant', 'tool']);
    expect(await view.locator('[data-testid=call-messages] > li.mark-added').count()).toBe(2);
    expect(await view.getByTestId('call-diff').textContent()).toContain('Since call 1: +2 message(s) added');
    expect(await view.locator('.call-result strong').first().textContent()).toBe('read_feedback_csv');
    // the response: the tool call the model asked for, with its arguments; the figures
    expect(await view.getByTestId('call-response').textContent()).toContain('feedback_stats');
    const figs = await view.locator('.call-figs').innerText();
    expect(figs).toMatch(/Tokens\s+[\d,]+ in · [\d,]+ out/);
    expect(figs).toMatch(/Latency\s+\S+/);
    expect(figs).toContain('offline:reference-v1');
    await page.screenshot({ path: join(out, 'call-view.png'), fullPage: true });
    await view.screenshot({ path: join(out, 'call-view-detail.png') });
    // a turn in the steps opens its call too
    await page.locator('[data-turn="model:3.0"] button').click();
    await expect.poll(() => view.locator('.call-head .muted').textContent()).toBe('model:3.0');
    expect(await page.locator('[data-turn="model:3.0"]').getAttribute('class')).toContain('focused');
    expect((page as Page & { errors: string[] }).errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('after a compaction, the next call shows what was taken out and the summary put in', async () => {
    const big = join(dir, 'big.txt');
    writeFileSync(big, `${Array.from({ length: 400 }, (_, i) => `line ${i} of the big input file with some words`).join('\n')}\n`);
    const turns = [
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', limit: 150 } }] },
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', offset: 151, limit: 150 } }] },
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', offset: 301, limit: 100 } }] },
      { text: 'read it all' },
    ];
    writeFileSync(join(dir, 'turns.json'), JSON.stringify(turns));
    const runId = await finished({ plugin: 'reader', input: { file: big }, model: 'script:turns.json', limits: { context_tokens: 4_000 } });
    const page = await openRun(runId);
    const compactedTurn = page.locator('.wf-row.kind-compaction').first();
    await compactedTurn.waitFor();
    // the turn after the (first) compaction
    const turnIds = await page.locator('.wf-row.kind-model').evaluateAll((els) => els.map((e) => e.getAttribute('data-bar')));
    const compactionStart = await compactedTurn.evaluate((e) => [...e.closest('ol')!.children].indexOf(e.closest('li')!));
    const rowIndex = async (id: string) => page.locator(`[data-bar="${id}"]`).evaluate((e) => [...e.closest('ol')!.children].indexOf(e.closest('li')!));
    let after = '';
    for (const id of turnIds) if (!after && (await rowIndex(id!)) > compactionStart) after = id!;
    await page.locator(`[data-bar="${after}"]`).click();
    const view = page.getByTestId('call-view');
    await view.getByTestId('call-removed').waitFor();
    expect(await view.getByTestId('call-diff').textContent()).toMatch(/taken out/);
    expect(await view.locator('[data-testid=call-messages] > li.mark-added').first().textContent()).toContain('[summary of earlier turns');
    await view.screenshot({ path: join(out, 'call-view-compaction.png') });
    await page.close();
  }, 120_000);

  it('says so when the run did not record its calls (capture.model_io: false)', async () => {
    const runId = await finished({ plugin: 'private-chat', goal: 'hello', input: {} });
    const page = await openRun(runId);
    await page.locator('[data-bar="model:1.0"]').click();
    expect(await page.getByTestId('call-missing').textContent()).toContain('capture.model_io was false');
    await page.close();
  }, 60_000);
});

describe('a live run', () => {
  it('takes a steering message from its page, shows it in place, and the next call carries it; a finished run shows no Cancel', async () => {
    const run = await service.create({ plugin: 'steerable', input: {} });
    const page = await openRun(run.run_id);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('tool_executing');
    expect(await page.getByTestId('stream-state').textContent()).toBe('live');
    await page.getByLabel('message to the run').fill('Keep it shorter, please.');
    await page.getByRole('button', { name: 'Send' }).click();
    const msg = page.locator('.step.message');
    await expect.poll(() => msg.textContent(), { timeout: 30_000 }).toContain('Keep it shorter, please.');
    expect(await msg.textContent()).toContain('waiting for the model');
    await page.screenshot({ path: join(out, 'steer-waiting.png'), fullPage: true });
    release();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('completed');
    await expect.poll(() => msg.textContent(), { timeout: 30_000 }).toContain('read by the model');
    // finished: no Cancel, no message box, no stream label
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect(await page.getByTestId('message-box').count()).toBe(0);
    expect(await page.getByTestId('stream-state').count()).toBe(0);
    await page.locator('[data-bar="model:2.0"]').click();
    const added = page.locator('[data-testid=call-messages] > li.mark-added');
    await expect.poll(() => added.allTextContents()).toContainEqual(expect.stringContaining('[message from the user while you work] Keep it shorter, please.'));
    await page.screenshot({ path: join(out, 'steer-delivered.png'), fullPage: true });
    await page.close();
  }, 120_000);
});

describe('a live run, further', () => {
  it('takes a follow-up from its page: shown in place while the run works, and after its answer the run goes on with it', async () => {
    const run = await service.create({ plugin: 'followable', input: {}, goal: 'look into it' });
    const page = await openRun(run.run_id);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('tool_executing');
    await page.getByLabel('follow up (after its answer)').check();
    await page.getByLabel('message to the run').fill('and now check the dates');
    await page.getByRole('button', { name: 'Send' }).click();
    const msg = page.locator('.step.message');
    await expect.poll(() => msg.textContent(), { timeout: 30_000 }).toContain('and now check the dates');
    expect(await msg.locator('.kind').textContent()).toBe('follow-up');
    expect(await msg.textContent()).toContain('waiting for the model');
    release();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('completed');
    await expect.poll(() => msg.textContent(), { timeout: 30_000 }).toContain('read by the model');
    // the run went on after its first answer: the answer shown is the follow-up's
    expect(await page.locator('.answer .md').textContent()).toContain('answer to: and now check the dates');
    await page.locator('[data-bar="model:3.0"]').click();
    const added = page.locator('[data-testid=call-messages] > li.mark-added');
    await expect.poll(() => added.allTextContents()).toContainEqual(expect.stringContaining('and now check the dates'));
    await page.close();
  }, 120_000);

  it('shows a run whose answer is in as finished, though the status it last read still says it works', async () => {
    const runId = await finished({ plugin: 'chat', goal: 'hello', input: {} });
    const page = await ctx.newPage();
    // the status as a poll can still read it between the answer and the run's end
    await page.route(
      (url) => url.pathname === `/api/runs/${runId}`,
      async (route) => {
        const res = await route.fetch();
        await route.fulfill({ response: res, json: { ...((await res.json()) as Record<string, unknown>), status: 'tool_executing' } });
      },
    );
    await page.goto(`${server.url}/#/runs/${runId}`);
    await page.locator('.answer .md').waitFor();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('completed');
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect(await page.getByTestId('message-box').count()).toBe(0);
    expect(await page.getByTestId('stream-state').count()).toBe(0);
    await page.close();
  }, 60_000);
});

describe('a chat', () => {
  it('reads as one conversation, in a font that has CJK glyphs', async () => {
    const first = await service.create({ plugin: 'chat', goal: '你好，请总结一下反馈。', input: {} });
    await service.wait(first.run_id);
    const second = await finished({ plugin: 'chat', goal: 'Xin chào — and then?', input: {}, conversation_id: first.run_id });
    const page = await openRun(second);
    const conv = page.getByTestId('conversation');
    await conv.waitFor();
    expect(await conv.locator('.bubble.user').allTextContents()).toEqual(['你好，请总结一下反馈。', 'Xin chào — and then?']);
    expect(await conv.locator('li.current .bubble.user').textContent()).toBe('Xin chào — and then?');
    // the page names fonts that cover CJK, and this machine renders the goal with one of them (not boxes)
    const family = (await page.evaluate('getComputedStyle(document.body).fontFamily')) as string;
    expect(family).toContain('Noto Sans CJK SC');
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('DOM.enable');
    await cdp.send('CSS.enable');
    const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '.conversation .bubble.user' });
    const { fonts } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
    expect(fonts.map((f: { familyName: string }) => f.familyName).join(',')).toMatch(/WenQuanYi|Noto Sans CJK|Source Han|Droid Sans Fallback/);
    await page.screenshot({ path: join(out, 'conversation-cjk.png'), fullPage: true });
    await page.close();
  }, 120_000);
});

describe('the runs list and two runs compared', () => {
  it("shows duration, agent, model, tokens, cost and a failed run's diagnosis; filters by status, agent and model; searches goals; compares two runs", async () => {
    const a = await finished({ plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'Alpha' }, goal: 'Rank the alpha problems' });
    const b = await finished({ plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'Beta', max_rows: 100 }, goal: 'Rank the beta problems' });
    const failed = await finished({ plugin: 'feedbacklens', input: { csv_path: csv }, goal: 'Too few turns', limits: { max_iterations: 1 } });
    const page = await ctx.newPage();
    await page.goto(`${server.url}/#/`);
    // the new-run form offers every agent, chat included
    await expect.poll(() => page.locator('select[name=plugin] option').allTextContents()).toContain('chat 1.0.0');
    const row = (id: string) => page.locator(`[data-run="${id}"]`);
    await row(a).waitFor();
    const figs = await row(a).locator('.figs').innerText();
    expect(figs).toMatch(/offline:reference-v1\s+[\d.]+ (ms|s)\s+[\d,]+ tok\s+\$0/);
    expect(await row(failed).getByTestId('run-diagnosis').textContent()).toMatch(/^max_iterations: stopped after max_iterations \(1\)/);
    await page.screenshot({ path: join(out, 'runs-list.png'), fullPage: true });
    // status, agent and model filters; a search over goals
    await page.getByLabel('filter by status').selectOption('failed');
    await expect.poll(() => page.locator('.run-item').count()).toBe(1);
    await page.getByLabel('filter by status').selectOption('');
    await page.getByLabel('filter by agent').selectOption('chat');
    await expect.poll(async () => new Set(await page.locator('.run-item .plugin').allTextContents())).toEqual(new Set(['chat']));
    await page.getByLabel('filter by agent').selectOption('');
    await page.getByLabel('filter by model').fill('offline:reference-v1');
    await expect.poll(() => page.locator('.run-item').count()).toBeGreaterThan(2);
    await page.getByLabel('filter by model').fill('openai:gpt-4o');
    await expect.poll(() => page.locator('.run-list').textContent()).toBe('');
    expect(await page.getByText('No runs match these filters.').count()).toBe(1);
    await page.getByLabel('filter by model').fill('');
    await page.getByLabel('search goals').fill('BETA prob');
    await expect.poll(() => page.locator('.run-item').evaluateAll((els) => els.map((e) => e.getAttribute('data-run')))).toEqual([b]);
    await page.getByLabel('search goals').fill('Rank the');
    await expect.poll(() => page.locator('.run-item').count()).toBe(2);
    // two ticked runs open side by side
    await page.getByLabel(`compare ${a}`).check();
    await page.getByLabel(`compare ${b}`).check();
    await page.getByRole('button', { name: 'Compare (2/2)' }).click();
    await page.waitForURL(new RegExp(`#/compare/${a}/${b}`));
    const settings = page.getByTestId('compare-settings');
    await settings.waitFor();
    expect(await settings.locator('tr.differs th').allTextContents()).toEqual(['Goal']);
    expect(await page.getByTestId('compare-metrics').locator('tr', { hasText: 'Status' }).innerText()).toMatch(/completed\s+completed/);
    expect(await page.locator('.compare-steps').count()).toBe(2);
    // each artifact's difference (the products' names differ), and the system prompt's
    const report = page.locator('[data-artifact-diff="artifacts/insight_report.md"]');
    expect(await report.locator('summary').textContent()).toMatch(/\+\d+ −\d+ lines/);
    expect(await report.locator('.diff .removed').first().textContent()).toBeTruthy();
    expect(await page.locator('[data-artifact-diff="(system prompt)"] summary').textContent()).toMatch(/lines|the same/);
    await page.screenshot({ path: join(out, 'compare.png'), fullPage: false });
    await page.close();
  }, 180_000);
});

describe('the defects people saw', () => {
  it('thinking per turn, the Artifacts line its own paragraph, no hole beside the plan, durations on steps, no unexplained "closed"', async () => {
    const runId = await finished({ plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'TaskFlow' } });
    const page = await openRun(runId);
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('completed');
    // each turn's thinking is an entry of its own: "Step 2" three times, never glued into one paragraph
    await page.locator('.reasoning summary').click();
    const turns = await page.locator('.reasoning-turns li').allTextContents();
    expect(turns.length).toBeGreaterThan(3);
    for (const t of turns) expect(t.match(/Step \d/g)?.length ?? 0).toBeLessThanOrEqual(1);
    // "Artifacts: …" is a paragraph after the list, not glued to its last item
    expect(await page.locator('.answer .md li').last().textContent()).not.toContain('Artifacts:');
    expect(await page.locator('.answer .md > p').last().textContent()).toMatch(/^Artifacts: /);
    // two independent columns: the Artifacts card sits right under the Plan card, whatever the steps' length
    const plan = await page.locator('section.card', { has: page.getByRole('heading', { name: 'Plan' }) }).boundingBox();
    const arts = await page.locator('section.card', { has: page.getByRole('heading', { name: 'Artifacts' }) }).boundingBox();
    expect(arts!.y - (plan!.y + plan!.height)).toBeLessThan(30);
    // every tool step says how long it took
    const tools = page.locator('.steps .step:not(.turn):not(.message)');
    expect(await tools.count()).toBeGreaterThan(5);
    for (const d of await tools.locator('.dur').allTextContents()) expect(d).toMatch(/^(<1 ms|\d+ ms|[\d.]+ s)$/);
    expect(await tools.locator('.dur').count()).toBe(await tools.count());
    // a finished run's stream needs no label; nothing says "closed"
    expect(await page.getByText('closed', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    await page.screenshot({ path: join(out, 'run-page-workbench.png'), fullPage: true });
    await page.close();
  }, 120_000);
});
