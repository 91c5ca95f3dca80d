/**
 * Agent depth figures:
 *  1. compaction: the offline feedbacklens on the bundled example with limits.context_tokens 8,000
 *     (it peaks near 12k unlimited) against the same run unlimited — run time, compactions, tokens saved;
 *  2. subagent overhead: a parent's run_agent → the child's run created → the child's first event;
 *  3. parallel tool calls: one turn of four 200 ms read-only tools against one such call (target ≤ 1.3×).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { builtinPlugins } from '../src/plugins/builtin-plugins.js';
import { toolResults } from '../src/plugins/shared/conversation.js';
import type { Agent } from '../src/runtime/agent.js';
import type { ModelTurn, ProcedureState } from '../src/providers/model-turn.js';
import { runtrailPackageRoot } from '../src/runtime/package-root.js';
import { RunService } from '../src/runtime/service/run-service.js';
import type { AnyToolDefinition } from '../src/tools/tool.js';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function agent(name: string, tools: () => AnyToolDefinition[], turn: (s: ProcedureState) => ModelTurn, agents?: string[]): Agent {
  return {
    name,
    version: '1.0.0',
    description: name,
    inputSchema: z.object({}).passthrough(),
    fileInputs: [],
    defaultSkill: null,
    defaultGoal: name,
    promptFragments: [],
    createTools: tools,
    plan: [],
    artifacts: [],
    validators: [],
    ...(agents ? { agents } : {}),
    offlineProcedure: turn,
  };
}

async function compaction(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-compact-'));
  const service = new RunService({ dataDir: dir, agents: builtinPlugins(), inputRoots: 'any', env: {}, processRegistry: null });
  const csv = join(runtrailPackageRoot(), 'examples', 'feedback.csv');
  const once = async (limits: Record<string, number>) => {
    const t = performance.now();
    const r = await service.create({ plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'TaskFlow Pro' }, limits });
    const s = await service.wait(r.run_id);
    const ms = performance.now() - t;
    const m = JSON.parse(readFileSync(join(dir, 'runs', r.run_id, 'runtime', 'metrics.json'), 'utf8')) as {
      compactions: { count: number; tokens_saved: number };
      tokens: { input: number };
    };
    return { ms, status: s.status, ...m.compactions, input: m.tokens.input };
  };
  try {
    const plain: number[] = [];
    const forced: number[] = [];
    let last = { count: 0, tokens_saved: 0, input: 0, status: '' };
    let base = { input: 0 };
    for (let i = 0; i < 5; i++) {
      const a = await once({});
      plain.push(a.ms);
      base = a;
      const b = await once({ context_tokens: 8_000 });
      forced.push(b.ms);
      last = b;
    }
    console.log(`compaction, offline feedbacklens on examples/feedback.csv (median of 5, interleaved):`);
    console.log(`  unlimited:            ${median(plain).toFixed(1)} ms/run, model input ${base.input} tokens over the run`);
    console.log(
      `  context_tokens 8,000: ${median(forced).toFixed(1)} ms/run (${(median(forced) / median(plain)).toFixed(2)}×), ${last.count} compactions, ${last.tokens_saved} tokens taken out of the context, model input ${last.input} tokens (${((1 - last.input / base.input) * 100).toFixed(0)}% fewer), ${last.status}`,
    );
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function subagentOverhead(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sub-'));
  const child = agent(
    'child',
    () => [],
    () => ({ text: 'done' }),
  );
  const parent = agent(
    'parent',
    () => [],
    (s) => (toolResults(s.messages).length === 0 ? { toolCalls: [{ name: 'run_agent', args: { agent: 'child', goal: 'go' } }] } : { text: 'ok' }),
    ['child'],
  );
  const service = new RunService({ dataDir: dir, agents: [parent, child], env: {}, processRegistry: null });
  try {
    const gaps: number[] = [];
    const total: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await service.create({ plugin: 'parent', input: {} });
      let callAt = 0;
      let childId = '';
      for await (const e of service.events(r.run_id)) {
        if (e.stream === 'tool' && e.data.phase === 'start' && e.data.name === 'run_agent') callAt = e.ts;
        if (e.stream === 'run' && e.data.type === 'subagent.started') childId = e.data.childRunId;
      }
      const childEvents = readFileSync(join(dir, 'runs', childId, 'runtime', 'events.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean);
      const first = JSON.parse(childEvents[0]) as { ts: number };
      const last = JSON.parse(childEvents.at(-1)!) as { ts: number };
      gaps.push(first.ts - callAt);
      total.push(last.ts - callAt);
    }
    console.log(`subagent overhead (30 parent runs, offline child answering at once):`);
    console.log(
      `  run_agent called → child's first event: median ${median(gaps).toFixed(1)} ms, max ${Math.max(...gaps)} ms; → child's terminal event: median ${median(total).toFixed(1)} ms`,
    );
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function parallelTools(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-par-'));
  const slow: AnyToolDefinition = {
    name: 'slow_read',
    description: '200 ms read',
    parameters: z.object({ n: z.number() }),
    readOnly: true,
    execute: () => new Promise((r) => setTimeout(() => r({ ok: true, content: 'read' }), 200)),
  };
  const calls = (n: number) =>
    agent(
      `calls${n}`,
      () => [slow],
      (s) =>
        toolResults(s.messages).length === 0 ? { toolCalls: Array.from({ length: n }, (_, i) => ({ name: 'slow_read', args: { n: i } })) } : { text: 'ok' },
    );
  const service = new RunService({ dataDir: dir, agents: [calls(1), calls(4)], env: {}, processRegistry: null });
  try {
    const turnMs = async (plugin: string) => {
      const r = await service.create({ plugin, input: {} });
      let start = 0;
      let end = 0;
      for await (const e of service.events(r.run_id)) {
        if (e.stream === 'tool' && e.data.phase === 'start' && !start) start = e.ts;
        if (e.stream === 'tool' && e.data.phase === 'result') end = e.ts;
      }
      return end - start;
    };
    const one: number[] = [];
    const four: number[] = [];
    for (let i = 0; i < 5; i++) {
      one.push(await turnMs('calls1'));
      four.push(await turnMs('calls4'));
    }
    const ratio = median(four) / median(one);
    console.log(
      `parallel tool calls (median of 5): one 200 ms read-only call ${median(one).toFixed(0)} ms, a turn of four ${median(four).toFixed(0)} ms → ${ratio.toFixed(2)}× (target ≤ 1.3×)`,
    );
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await compaction();
  await subagentOverhead();
  await parallelTools();
}
