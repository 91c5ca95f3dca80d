/**
 * Durable runs:
 *  1. what checkpoints cost: a 1,000-tool-call run (a scripted model, a tool that does nothing) with
 *     its checkpoint against the same run without one (`durability: interrupt`), alternated, medians;
 *     once with a read-only tool (its journal records are not waited for) and once with a tool that
 *     is not safe to run twice (its `started` record is flushed to the disk before the handler runs);
 *  2. the floor of the second: one fdatasync per call, timed alone on the same disk (a loop of
 *     append + fdatasync) — a call that is not safe to run twice cannot start before its record is
 *     on the disk, so no run of such calls is cheaper than (run without checkpoints + that) per call;
 *  3. restart → the resumed run's first new event: a `runtrail run` killed with SIGKILL mid-call (in
 *     its first call, and after 990), then a service that resumes at start, against a new run's
 *     create → first event in the same process.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExtensionRegistry } from '../src/extensions/extension-registry.js';
import { RunService } from '../src/runtime/service/run-service.js';

const CALLS = 1_000;
/** calls per model turn (an agent may take at most 200 turns) */
const PER_TURN = 10;
const ROUNDS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function write(dir: string, rel: string, text: string): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), text);
}

/** Agents `<tool>-kept` (checkpointed) and `<tool>-bare` (durability: interrupt), CALLS calls each. */
function project(dir: string): void {
  write(
    dir,
    '.runtrail/plugins/noop.mjs',
    `const p = { type: 'object', properties: { n: { type: 'number' } } };
export default { name: 'noop', tools: [
  { name: 'peek', description: 'reads nothing', parameters: p, readOnly: true, execute: () => 'ok' },
  { name: 'poke', description: 'changes nothing', parameters: p, execute: () => 'ok' },
] };
`,
  );
  for (const tool of ['peek', 'poke']) {
    const turns = [
      ...Array.from({ length: CALLS / PER_TURN }, (_, t) => ({
        toolCalls: Array.from({ length: PER_TURN }, (_, i) => ({ name: tool, args: { n: t * PER_TURN + i } })),
      })),
      { text: 'done' },
    ];
    write(dir, `.runtrail/agents/${tool}.turns.json`, JSON.stringify(turns));
    for (const [name, extra] of [
      [`${tool}-kept`, ''],
      [`${tool}-bare`, '\ndurability: interrupt'],
    ]) {
      write(
        dir,
        `.runtrail/agents/${name}.md`,
        `---\nname: ${name}\ndescription: ${CALLS} calls\nmodel: script:${tool}.turns.json\ntools: [${tool}]\nlimits: { max_iterations: ${CALLS / PER_TURN + 5}, max_tool_calls: ${CALLS}, timeout_s: 600 }${extra}\n---\nCall the tool.\n`,
      );
    }
  }
}

async function benchCheckpointCost(dir: string): Promise<void> {
  project(dir);
  const registry = await ExtensionRegistry.load({ projectDir: dir, builtins: [], builtinSkillsDir: join(dir, 'none') });
  if (registry.problems.length) throw new Error(registry.problems.map((p) => p.message).join('; '));
  const service = new RunService({ dataDir: join(dir, 'data'), agentSource: registry, env: {}, cwd: dir, processRegistry: null, concurrency: 1 });
  /** Wall time of one run, and the CPU time this process spent on it (the thread pool's included):
   *  the other helpers' load weighs on the first far more than on the second. */
  const once = async (agent: string): Promise<{ ms: number; cpuMs: number }> => {
    const t = performance.now();
    const c = process.cpuUsage();
    const { run_id } = await service.create({ plugin: agent, input: {} });
    const st = await service.wait(run_id);
    if (st.status !== 'completed') throw new Error(`${agent} ${st.status}: ${st.diagnosis?.summary}`);
    const cpu = process.cpuUsage(c);
    return { ms: performance.now() - t, cpuMs: (cpu.user + cpu.system) / 1000 };
  };
  const perCall = (kept: number, bare: number) => `${(((kept - bare) / CALLS) * 1000).toFixed(0)} µs`;
  let pokeBareMs = 0;
  for (const tool of ['peek', 'poke']) {
    await once(`${tool}-bare`); // warm-up, both sides
    await once(`${tool}-kept`);
    const kept: Array<{ ms: number; cpuMs: number }> = [];
    const bare: Array<{ ms: number; cpuMs: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      // which side goes first alternates: a drift of the machine's load weighs on both alike
      if (r % 2) kept.push(await once(`${tool}-kept`));
      bare.push(await once(`${tool}-bare`));
      if (!(r % 2)) kept.push(await once(`${tool}-kept`));
    }
    const k = median(kept.map((x) => x.ms));
    const b = median(bare.map((x) => x.ms));
    const kc = median(kept.map((x) => x.cpuMs));
    const bc = median(bare.map((x) => x.cpuMs));
    if (tool === 'poke') pokeBareMs = b;
    const what = tool === 'peek' ? 'read-only tool' : 'tool not safe to run twice (started record flushed before the handler)';
    console.log(
      `${CALLS.toLocaleString('en')}-call run, ${what}, ${ROUNDS} rounds (median): with checkpoints ${k.toFixed(0)} ms, without ${b.toFixed(0)} ms → ratio ${(k / b).toFixed(2)}× (goal ≤ 1.10×), ${perCall(k, b)} per tool call; CPU ${kc.toFixed(0)} ms against ${bc.toFixed(0)} ms → ${(kc / bc).toFixed(2)}×, ${perCall(kc, bc)} per tool call`,
    );
    const last = (await service.list({ plugin: `${tool}-kept`, limit: 1 })).runs[0].run_id;
    const size = statSync(join(service.runsDir, last, 'runtime', 'checkpoint.jsonl')).size;
    console.log(`  its checkpoint: ${(size / 1024).toFixed(0)} KiB`);
  }
  const flushUs = fdatasyncCost(join(dir, 'data'));
  const floor = (pokeBareMs + (flushUs * CALLS) / 1000) / pokeBareMs;
  console.log(
    `  floor for a tool not safe to run twice: one fdatasync per call, alone on this disk ${flushUs.toFixed(0)} µs (median of ${FLUSHES}) → at best ${floor.toFixed(2)}× here${floor > 1.1 ? '; 1.10× is out of reach while one flush costs more than a tenth of a call' : ''}`,
  );
  await service.close();
}

const FLUSHES = 200;

/** µs of one append + fdatasync of a checkpoint-sized line, the median of FLUSHES, in `dir`. */
function fdatasyncCost(dir: string): number {
  const fd = openSync(join(dir, 'flush-probe.jsonl'), 'a');
  const line = Buffer.from(`${'x'.repeat(150)}\n`);
  const us: number[] = [];
  try {
    for (let i = 0; i < FLUSHES; i++) {
      const t = performance.now();
      writeSync(fd, line);
      fdatasyncSync(fd);
      us.push((performance.now() - t) * 1000);
    }
  } finally {
    closeSync(fd);
  }
  return median(us);
}

/**
 * Restart → the resumed run's first new event, for a run killed in its first call and for one killed
 * after `before` calls (its checkpoint and event log are read back in full before it goes on).
 */
async function benchRestart(dir: string, before: number): Promise<void> {
  const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js');
  const agent = `slow-${before}`;
  write(
    dir,
    '.runtrail/plugins/slow.mjs',
    `export default { name: 'slow', tools: [
  { name: 'wait', description: 'waits', parameters: { type: 'object' }, readOnly: true, execute: () => new Promise((r) => setTimeout(() => r('ok'), 60_000)) },
  { name: 'look', description: 'reads nothing', parameters: { type: 'object', properties: { n: { type: 'number' } } }, readOnly: true, execute: () => 'ok' },
] };\n`,
  );
  const turns = [
    ...Array.from({ length: before / PER_TURN }, (_, t) => ({
      toolCalls: Array.from({ length: PER_TURN }, (_, i) => ({ name: 'look', args: { n: t * PER_TURN + i } })),
    })),
    { toolCalls: [{ name: 'wait', args: {} }] },
    { text: 'done' },
  ];
  write(dir, `.runtrail/agents/${agent}.turns.json`, JSON.stringify(turns));
  write(
    dir,
    `.runtrail/agents/${agent}.md`,
    `---\nname: ${agent}\ndescription: waits\nmodel: script:${agent}.turns.json\ntools: [wait, look]\nlimits: { max_iterations: ${before / PER_TURN + 5}, max_tool_calls: ${before + 1}, timeout_s: 600 }\n---\nWait.\n`,
  );
  const restarts: number[] = [];
  const fresh: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const data = join(dir, `restart-${before}-${r}`);
    const child = spawn(process.execPath, [main, 'run', agent, '--data-dir', data], { cwd: dir, stdio: 'ignore' });
    const closed = new Promise((res) => child.once('close', res));
    const runsDir = join(data, 'runs');
    const eventsFile = () => {
      const id = existsSync(runsDir) ? readdirSync(runsDir)[0] : undefined;
      const file = id ? join(runsDir, id, 'runtime', 'events.jsonl') : '';
      return file && existsSync(file) ? file : '';
    };
    for (let i = 0; i < 1500 && !(eventsFile() && readFileSync(eventsFile(), 'utf8').includes('"phase":"start","name":"wait"')); i++)
      await new Promise((res) => setTimeout(res, 20));
    if (child.exitCode !== null) throw new Error(`${agent} ended (exit ${child.exitCode}) before its slow call was killed`);
    child.kill('SIGKILL');
    await closed;
    const file = eventsFile();
    // sizes, not contents: reading a long log in this loop would slow the service it measures
    const size = statSync(file).size;
    const registry = await ExtensionRegistry.load({ projectDir: dir, builtins: [], builtinSkillsDir: join(dir, 'none') });
    const t = performance.now();
    const service = new RunService({ dataDir: data, agentSource: registry, env: {}, cwd: dir, processRegistry: null, resumeOnStart: true });
    await service.init();
    while (statSync(file).size === size) await new Promise((res) => setImmediate(res));
    restarts.push(performance.now() - t);
    // the baseline: a new run of the same agent, create → its first event, in the same process
    const t2 = performance.now();
    const created = await service.create({ plugin: agent, input: {} });
    const newFile = join(runsDir, created.run_id, 'runtime', 'events.jsonl');
    while (!existsSync(newFile) || statSync(newFile).size === 0) await new Promise((res) => setImmediate(res));
    fresh.push(performance.now() - t2);
    await service.close();
  }
  const killed = before ? `killed after ${before.toLocaleString('en')} calls` : 'killed in its first call';
  console.log(
    `restart → resumed run's first new event, a run ${killed}, ${ROUNDS} rounds (median): ${median(restarts).toFixed(1)} ms (a new run's create → first event in the same process: ${median(fresh).toFixed(1)} ms)`,
  );
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-bench-durable-'));
  try {
    await benchCheckpointCost(dir);
    await benchRestart(dir, 0);
    // an agent may make at most 1,000 calls: this one's last is the call it is killed in
    await benchRestart(dir, CALLS - PER_TURN);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
