/**
 * Compaction forced with a small limits.context_tokens, through the offline feedbacklens
 * (its procedure writes the summary and reads its facts back) and through the script model (an
 * extractive summary); a tail that cannot fit is a context_length failure, never a loop.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { builtinPlugins } from '../../../src/plugins/builtin-plugins.js';
import { runtrailPackageRoot } from '../../../src/runtime/package-root.js';
import type { ChatMessage } from '../../../src/providers/model-provider.js';
import { compactionBudget, tailStart } from '../../../src/runtime/loop/compaction.js';
import { RunService } from '../../../src/runtime/service/run-service.js';
import { createTextOnlyPlugin } from '../../../src/plugins/text-only-plugin.js';
import { createReadFileTool } from '../../../src/tools/read-file-tool.js';

let dir = '';
let service: RunService;
afterEach(async () => {
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function follow(s: RunService, req: Record<string, unknown>) {
  const created = await s.create(req);
  const events: AgentEvent[] = [];
  for await (const e of s.events(created.run_id)) events.push(e);
  const status = await s.wait(created.run_id);
  const root = join(dir, 'runs', created.run_id);
  return { status, events, read: (rel: string) => readFileSync(join(root, rel), 'utf8') };
}

const compactionEvents = (events: AgentEvent[]) => events.flatMap((e) => (e.stream === 'compaction' ? [e.data] : []));

describe('compaction', () => {
  it('scales the reserve and the kept tail down with a small window, and never starts the tail on a tool result', () => {
    expect(compactionBudget(200_000)).toEqual({ reserve: 16_000, keepTail: 20_000 });
    expect(compactionBudget(8_000)).toEqual({ reserve: 2_000, keepTail: 3_200 });
    const big = 'x'.repeat(4_000);
    const messages: ChatMessage[] = [
      { role: 'user', content: 'goal' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 't', args: {} },
          { id: 'b', name: 't', args: {} },
        ],
      },
      { role: 'tool', toolCallId: 'a', toolName: 't', content: big, isError: false },
      { role: 'tool', toolCallId: 'b', toolName: 't', content: 'small', isError: false },
      { role: 'assistant', content: 'next' },
    ];
    // 300 tokens would cut between the two results of one call batch: the tail starts after them instead
    expect(tailStart(messages, 0, 300)).toBe(4);
    expect(tailStart(messages, 0, 100_000)).toBe(1);
  });

  it('keeps the offline feedbacklens going: it completes with valid artifacts under a window it would overflow', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-compact-'));
    service = new RunService({ dataDir: dir, agents: builtinPlugins(), inputRoots: 'any', env: {}, processRegistry: null });
    const csv = join(runtrailPackageRoot(), 'examples', 'feedback.csv');
    // unlimited, this run's context peaks at about 12k tokens
    const r = await follow(service, { plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'TaskFlow Pro' }, limits: { context_tokens: 8_000 } });
    expect(r.status.diagnosis).toBeNull();
    expect(r.status.status).toBe('completed');
    const log = r
      .read('runtime/compactions.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tokens_before: number; tokens_after: number; summary: string; replaced: unknown[] });
    expect(log.length).toBeGreaterThan(0);
    for (const c of log) {
      expect(c.tokens_after).toBeLessThan(c.tokens_before);
      expect(c.summary).toMatch(/^\[summary of earlier turns: \d+ messages were compacted/);
      expect(c.summary).toContain('runtrail-state');
      expect(c.replaced.length).toBeGreaterThan(0);
    }
    const events = compactionEvents(r.events);
    expect(events.filter((e) => e.phase === 'start')).toHaveLength(log.length);
    expect(
      events.filter((e) => e.phase === 'end').every((e) => e.phase === 'end' && e.willRetry === false && (e.tokensAfter ?? 0) < (e.tokensBefore ?? 0)),
    ).toBe(true);
    // on the wire: process frames of a runtime operation at stage 'compaction'
    const ops = r.events.flatMap((e) => (e.stream === 'process' && e.data.event.stage === 'compaction' ? [e.data.event] : []));
    expect(ops.length).toBeGreaterThan(0);
    expect(ops.every((o) => o.targetType === 'runtime')).toBe(true);
    const metrics = JSON.parse(r.read('runtime/metrics.json')) as { compactions: { count: number; tokens_saved: number } };
    expect(metrics.compactions.count).toBe(log.length);
    expect(metrics.compactions.tokens_saved).toBeGreaterThan(0);
  });

  it('fails with context_length, once, when even the kept tail cannot fit', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-compact-'));
    service = new RunService({ dataDir: dir, agents: builtinPlugins(), inputRoots: 'any', env: {}, processRegistry: null });
    const csv = join(runtrailPackageRoot(), 'examples', 'feedback.csv');
    const r = await follow(service, { plugin: 'feedbacklens', input: { csv_path: csv }, limits: { context_tokens: 6_000 } });
    expect(r.status.status).toBe('failed');
    expect(r.status.diagnosis).toMatchObject({ code: 'context_length' });
    expect(r.status.diagnosis!.summary).toMatch(/does not fit the 6000-token window even after compaction/);
    const ends = compactionEvents(r.events).filter((e) => e.phase === 'end');
    expect(ends.at(-1)).toMatchObject({ failed: expect.stringContaining('does not fit') });
    expect(ends.length).toBeLessThanOrEqual(3);
  });

  it('through the script model: an extractive summary, and a provider context_length error compacts and retries that turn once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-compact-'));
    const big = join(dir, 'big.txt');
    writeFileSync(big, `${Array.from({ length: 400 }, (_, i) => `line ${i} of the big input file with some words`).join('\n')}\n`);
    const reader = createTextOnlyPlugin({ name: 'reader', description: 'reads', offlineAnswer: 'x' });
    const plugin = {
      ...reader,
      fileInputs: ['file'],
      inputSchema: { type: 'object', properties: { file: { type: 'string' } } },
      createTools: (ctx: Parameters<typeof reader.createTools>[0]) => [createReadFileTool({ files: ctx.workspace })],
    };
    const turns = [
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', limit: 150 } }] },
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', offset: 151, limit: 150 } }] },
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', offset: 301, limit: 100 } }] },
      { error: { code: 'context_length', message: 'prompt is too long', retryable: false } },
      { text: 'read it all' },
    ];
    writeFileSync(join(dir, 'turns.json'), JSON.stringify(turns));
    service = new RunService({ dataDir: dir, agents: [plugin], inputRoots: 'any', env: {}, cwd: dir, processRegistry: null });
    const r = await follow(service, { plugin: 'reader', input: { file: big }, model: 'script:turns.json', limits: { context_tokens: 4_000 } });
    expect(r.status.status).toBe('completed');
    expect(r.status.final_answer).toBe('read it all');
    const ends = compactionEvents(r.events).filter((e) => e.phase === 'end');
    expect(ends.length).toBeGreaterThanOrEqual(2);
    expect(ends.some((e) => e.phase === 'end' && e.willRetry)).toBe(true);
    const log = r
      .read('runtime/compactions.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { summary: string });
    expect(log[0].summary).toMatch(/- you called read_file \{"path":"input\/big\.txt","limit":150\} → ok: line 0 of the big input/);
  });
});
