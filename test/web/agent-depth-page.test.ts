/** Approvals and subagents on the page: a tool call waiting for approval is approved from its step; a subagent is a nested step. */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { launchBrowser, type TestBrowser } from './browser.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { postJson } from '../server/helpers.js';

const out = resolve('test-output');
let project: ProjectFixture;
let service: RunService;
let server: RunningServer;
let ctx: BrowserContext;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  project = makeProject({
    '.runtrail/agents/careful.md': agentFile(
      'name: careful\ndescription: asks before it writes\nmodel: script:careful.turns.json\npermissions: { write_artifact: ask }',
    ),
    '.runtrail/agents/careful.turns.json': JSON.stringify([
      { toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] },
      { text: 'written after approval' },
    ]),
    '.runtrail/agents/lead.md': agentFile('name: lead\ndescription: hands a part to its helper\nmodel: script:lead.turns.json\nagents: [helper]'),
    '.runtrail/agents/lead.turns.json': JSON.stringify([
      { toolCalls: [{ name: 'run_agent', args: { agent: 'helper', goal: 'write the part' } }] },
      { text: 'the helper wrote the part' },
    ]),
    '.runtrail/agents/helper.md': agentFile('name: helper\ndescription: writes parts\nmodel: script:helper.turns.json'),
    '.runtrail/agents/helper.turns.json': JSON.stringify([
      { toolCalls: [{ name: 'write_artifact', args: { path: 'part.md', content: '# part\n' } }] },
      { text: 'part done' },
    ]),
  });
  const registry = await ExtensionRegistry.load({ projectDir: project.dir, builtins: [], builtinSkillsDir: join(project.dir, 'none') });
  service = new RunService({ dataDir: join(project.dir, '.runtrail'), agentSource: registry, env: {}, cwd: project.dir, processRegistry: null });
  server = await startServer({ service, port: 0, env: {} });
  browser = await launchBrowser();
  ctx = browser.ctx;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await service?.close();
  project?.cleanup();
});

describe('agent depth on the page', () => {
  it('approves a waiting tool call from its step', async () => {
    const runId = (await postJson(`${server.url}/api/runs`, { plugin: 'careful', input: {} })).body.run_id as string;
    const page = await ctx.newPage();
    await page.goto(`${server.url}/#/runs/${runId}`);
    const group = page.getByRole('group', { name: 'approval for write_artifact' });
    await group.waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('awaiting_approval');
    expect(await page.locator('.badge', { hasText: 'awaiting approval' }).count()).toBe(1);
    await page.screenshot({ path: join(out, 'approval-pending.png'), fullPage: true });
    await group.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('completed');
    await expect.poll(() => page.getByTestId('approval-decision').first().textContent()).toBe('Approved by web');
    await page.locator('.answer', { hasText: 'written after approval' }).waitFor();
    await page.screenshot({ path: join(out, 'approval-approved.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('shows a subagent as a nested step with its own steps and a link to its run', async () => {
    const runId = (await postJson(`${server.url}/api/runs`, { plugin: 'lead', input: {} })).body.run_id as string;
    await service.wait(runId);
    const childId = (await service.get(runId))!.children![0];
    const page = await ctx.newPage();
    await page.goto(`${server.url}/#/runs/${runId}`);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('completed');
    await page.getByRole('button', { name: 'ok agent helper' }).click();
    const child = page.getByTestId('child-run');
    await child.locator('.step', { hasText: 'write_artifact' }).waitFor();
    expect(await child.getByRole('link', { name: childId }).count()).toBe(1);
    expect(await page.getByTestId('children').getByRole('link', { name: childId }).count()).toBe(1);
    await page.screenshot({ path: join(out, 'subagent-nested.png'), fullPage: true });
    await child.getByRole('link', { name: childId }).click();
    await page.waitForURL(new RegExp(`#/runs/${childId}$`));
    // the child's page links back to its parent (the conversation panel may list the parent too)
    await page.getByRole('paragraph').filter({ hasText: 'Subagent of' }).getByRole('link', { name: runId }).waitFor();
    await page.close();
  }, 60_000);
});
