/**
 * Run engine figures:
 *  1. median wall time of 50 offline feedbacklens runs on a generated 10,000-row CSV, against the
 *     bare csv-parse of the same file (the irreducible work) measured in the same process;
 *  2. runtime overhead per tool call: a no-op tool through the ToolExecutor (lookup, zod args,
 *     permission, hooks, timeout race, start/result events on a bus) vs calling its handler directly.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { AgentEventBus } from '../src/events/agent-event-bus.js';
import { createFeedbackLensPlugin } from '../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { EventStore } from '../src/runtime/storage/event-store.js';
import { RunService } from '../src/runtime/service/run-service.js';
import { ToolExecutor } from '../src/runtime/loop/tool-executor.js';
import type { PublishFn } from '../src/runtime/run-publisher.js';
import type { AnyToolDefinition } from '../src/tools/tool.js';

const RUNS = 50;
const ROWS = 10_000;
const CALLS = 20_000;
/** Rounds of the tool-call measurement (each side CALLS calls per round). */
const ROUNDS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Deterministic, realistic-looking feedback rows. */
function generateCsv(rows: number): string {
  const topics = [
    ['sync', 'Sync between my phone and laptop keeps failing and I lose edits'],
    ['export', 'Exporting to PDF cuts off the last page of long reports'],
    ['price', 'The new pricing is too expensive for a small team like ours'],
    ['onboarding', 'Onboarding was smooth and the templates saved us hours'],
    ['search', 'Search is slow and misses tasks with accented names'],
    ['notifications', 'Too many notifications, I cannot find the setting to mute them'],
    ['calendar', 'Calendar integration is great, love seeing deadlines in Google Calendar'],
    ['crash', 'The app crashes when I attach a large file on iOS'],
    ['support', 'Support answered within an hour and fixed my billing issue'],
    ['dark mode', 'Please add a dark mode, the white screen hurts at night'],
  ];
  const moods = ['', ' Really frustrating.', ' Otherwise I love it.', ' Please fix soon!', ' Thanks team.', ' This is a deal breaker for us.'];
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const lines = ['feedback_id,date,rating,channel,text'];
  for (let i = 1; i <= rows; i++) {
    const [, text] = topics[Math.floor(rnd() * topics.length)];
    const mood = moods[Math.floor(rnd() * moods.length)];
    const day = String(1 + Math.floor(rnd() * 28)).padStart(2, '0');
    const rating = 1 + Math.floor(rnd() * 5);
    const channel = ['app store', 'email', 'survey', 'chat'][Math.floor(rnd() * 4)];
    lines.push(`F${String(i).padStart(5, '0')},2026-06-${day},${rating},${channel},"${text}${mood} (#${i % 97})"`);
  }
  return `${lines.join('\n')}\n`;
}

async function benchRuns(dir: string): Promise<void> {
  const csv = join(dir, 'feedback-10k.csv');
  writeFileSync(csv, generateCsv(ROWS));
  // baseline: parsing the same file once with csv-parse
  const parseMs: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    parse(readFileSync(csv), { columns: true, bom: true, skip_empty_lines: true });
    parseMs.push(performance.now() - t);
  }
  const service = new RunService({ dataDir: join(dir, 'data'), agents: [createFeedbackLensPlugin()], inputRoots: 'any', concurrency: 1, env: {} });
  const wall: number[] = [];
  const runtimeShare: number[] = [];
  let failed = 0;
  let events = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const { run_id } = await service.create({ plugin: 'feedbacklens', input: { csv_path: csv } });
    const st = await service.wait(run_id);
    wall.push(performance.now() - t);
    if (st.status !== 'completed') {
      failed++;
      if (failed === 1) console.log(`  run ${run_id} ${st.status}: ${st.diagnosis?.summary ?? ''}`);
    }
    events += st.last_seq;
    // what the runtime itself spent: the run's duration minus tool handlers and model turns
    const m = JSON.parse(readFileSync(join(service.runsDir, run_id, 'runtime', 'metrics.json'), 'utf8')) as {
      duration_ms: number;
      tool_duration_ms: Record<string, number>;
      model_latency_ms: { total: number };
    };
    const tools = Object.values(m.tool_duration_ms).reduce((a, b) => a + b, 0);
    runtimeShare.push(m.duration_ms - tools - m.model_latency_ms.total);
  }
  await service.close();
  const med = median(wall);
  const base = median(parseMs);
  console.log(
    `feedbacklens offline, ${ROWS.toLocaleString('en')} rows, ${RUNS} runs: median ${med.toFixed(1)} ms/run (min ${Math.min(...wall).toFixed(1)}, max ${Math.max(...wall).toFixed(1)}), ${(events / RUNS).toFixed(0)} events/run, ${failed} not completed`,
  );
  console.log(
    `  of which runtime (not tool handlers, not model turns): median ${median(runtimeShare).toFixed(1)} ms/run (${((median(runtimeShare) / med) * 100).toFixed(0)}% of the run)`,
  );
  console.log(`  baseline csv-parse of the same file: median ${base.toFixed(1)} ms → run/parse ratio ${(med / base).toFixed(1)}×`);
}

async function benchToolOverhead(dir: string): Promise<void> {
  const noop: AnyToolDefinition = {
    name: 'noop',
    description: 'does nothing',
    parameters: z.object({ n: z.number() }),
    async execute() {
      return { ok: true, content: 'ok' };
    },
  };
  const bus = new AgentEventBus({ runId: 'run_bench' });
  const publish: PublishFn = (s, d) => void bus.publish(s, d);
  const executor = new ToolExecutor({ tools: [noop], allowedTools: ['noop'], publish });
  const store = new EventStore(join(dir, 'events.jsonl'));
  const bus2 = new AgentEventBus({ runId: 'run_bench2' });
  bus2.subscribe((e) => store.append(e));
  const executorStored = new ToolExecutor({ tools: [noop], allowedTools: ['noop'], publish: (s, d) => void bus2.publish(s, d) });

  const time = async (fn: (i: number) => Promise<unknown>): Promise<number> => {
    for (let i = 0; i < 2000; i++) await fn(i); // warm-up
    const t = performance.now();
    for (let i = 0; i < CALLS; i++) await fn(i);
    return ((performance.now() - t) * 1000) / CALLS;
  };
  // rounds alternate the three sides so a noisy moment hits them alike; medians are shown
  const directs: number[] = [];
  const viaExecutors: number[] = [];
  const viaStoreds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    directs.push(await time((i) => noop.execute({ n: i })));
    viaExecutors.push(await time((i) => executor.execute({ id: `c${i}`, name: 'noop', args: { n: i } })));
    viaStoreds.push(await time((i) => executorStored.execute({ id: `c${i}`, name: 'noop', args: { n: i } })));
  }
  const direct = median(directs);
  const viaExecutor = median(viaExecutors);
  const viaStored = median(viaStoreds);
  store.close();
  console.log(
    `tool call, ${CALLS.toLocaleString('en')} calls × ${ROUNDS} rounds (median): direct handler ${direct.toFixed(2)} µs, through ToolExecutor ${viaExecutor.toFixed(2)} µs → runtime overhead ${(viaExecutor - direct).toFixed(2)} µs/call (${(viaExecutor / direct).toFixed(1)}× the bare call)`,
  );
  console.log(`  with both tool events appended to events.jsonl: ${viaStored.toFixed(2)} µs/call → overhead ${(viaStored - direct).toFixed(2)} µs/call`);
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-bench-engine-'));
  try {
    await benchToolOverhead(dir);
    await benchRuns(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
