/**
 * A run killed with SIGKILL before its first model turn (while it opens its MCP servers, and while
 * it waits in the queue) has nothing to lose: the next start takes it up from its request, as the
 * same run, instead of ending it `interrupted`.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getJson, postJson } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, killHard, MAIN, runEvents, runtrail, type DurableProject } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

const FIXTURE_SERVER = join(import.meta.dirname, '..', 'mcp', 'fixtures', 'fixture-server.mjs');

/** An MCP server that notes each start in gate.log and, until the test creates <project>/release,
 *  never answers `initialize` (the run stays before its first turn); after, a real MCP server. */
const GATE = (dir: string) => `import { appendFileSync, existsSync } from 'node:fs';
appendFileSync(${JSON.stringify(join(dir, 'gate.log'))}, 'start\\n');
process.stdin.on('end', () => process.exit(0));
if (existsSync(${JSON.stringify(join(dir, 'release'))})) await import(${JSON.stringify(FIXTURE_SERVER)});
else {
  process.stdin.on('data', () => {});
  setInterval(() => {}, 60_000);
}
`;

const GATED_TOOLS = '[send, lookup, write_artifact, "mcp__gate__*"]';

const TURNS = [
  { text: 'sending a', toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
  { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nsent\n' } }] },
  { text: 'report written' },
];

function runIds(dir: string): string[] {
  const d = join(dir, 'data', 'runs');
  return existsSync(d) ? readdirSync(d) : [];
}

describe.runIf(existsSync(MAIN))('a run killed before its first model turn', () => {
  it('while it opens its MCP servers: `resume` takes it up from its request, as the same run, and it completes', async () => {
    p = durableProject(TURNS, { agentExtra: 'mcpServers: [gate]', tools: GATED_TOOLS });
    p.write('gate.mjs', GATE(p.dir));
    p.write('.runtrail/mcp.json', JSON.stringify({ mcpServers: { gate: { command: process.execPath, args: [join(p.dir, 'gate.mjs')] } } }));
    const gateStarts = () => (existsSync(join(p!.dir, 'gate.log')) ? readFileSync(join(p!.dir, 'gate.log'), 'utf8').split('\n').filter(Boolean).length : 0);
    const first = runtrail(p.dir, ['run', 'worker', '--data-dir', 'data'], children);
    expect(await eventually(() => gateStarts() === 1 && runIds(p!.dir).length === 1, 30_000), first.out()).toBe(true);
    await killHard(first.child);
    const [runId] = runIds(p.dir);
    const before = runEvents(p.dir, runId);
    expect(before.some((e) => e.stream === 'model')).toBe(false);

    const list = runtrail(p.dir, ['runs', '--data-dir', 'data'], children);
    await list.exited;
    expect(list.out()).toMatch(new RegExp(`${runId}\\s+\\S+ \\(resumable\\)`));

    p.release();
    const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    const status = JSON.parse(readFileSync(join(p.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status, again.out()).toBe('completed');
    expect(runIds(p.dir)).toEqual([runId]);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    // the events before the kill stay as they were, the new attempt's follow them
    expect(events.slice(0, before.length)).toEqual(before);
    const resumed = events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed?.data).toMatchObject({ attempt: 1, fromSeq: before.at(-1)!.seq, discardFromSeq: null, diagnosis: { code: 'resumed' } });
    // one start, one run: the lifecycle start of the dead attempt is not repeated
    expect(events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'start')).toHaveLength(1);
    expect(p.effects().filter((l) => l === 'start send:a')).toHaveLength(1);
    expect(existsSync(join(p.dir, 'data', 'runs', runId, 'artifacts', 'report.md'))).toBe(true);
    const metrics = JSON.parse(readFileSync(join(p.dir, 'data', 'runs', runId, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.resumes).toBe(1);
  }, 120_000);

  it('every time: the attempts are counted, and max_resumes ends it interrupted instead of a loop', async () => {
    p = durableProject(TURNS, { agentExtra: 'mcpServers: [gate]', tools: GATED_TOOLS, config: { durability: { max_resumes: 1 } } });
    p.write('gate.mjs', GATE(p.dir));
    p.write('.runtrail/mcp.json', JSON.stringify({ mcpServers: { gate: { command: process.execPath, args: [join(p.dir, 'gate.mjs')] } } }));
    const gateStarts = () => (existsSync(join(p!.dir, 'gate.log')) ? readFileSync(join(p!.dir, 'gate.log'), 'utf8').split('\n').filter(Boolean).length : 0);
    const first = runtrail(p.dir, ['run', 'worker', '--data-dir', 'data'], children);
    expect(await eventually(() => gateStarts() === 1 && runIds(p!.dir).length === 1, 30_000), first.out()).toBe(true);
    await killHard(first.child);
    const [runId] = runIds(p.dir);
    const second = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await eventually(() => gateStarts() === 2, 30_000), second.out()).toBe(true);
    await killHard(second.child);
    const third = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    await third.exited;
    const status = JSON.parse(readFileSync(join(p.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status).toBe('failed');
    expect(status.diagnosis.summary).toContain('resumed 1 time already');
    expect(gateStarts()).toBe(2);
    expect(checkEventLog(runEvents(p.dir, runId))).toEqual([]);
  }, 120_000);

  it('while it waits in the queue: the next serve starts it from its request, after the run ahead of it', async () => {
    p = durableProject([
      { toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] },
      { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nok\n' } }] },
      { text: 'report written' },
    ]);
    const serve = async () => {
      const s = runtrail(p!.dir, ['serve', '--port', '0', '--data-dir', 'data', '--concurrency', '1'], children);
      expect(await eventually(() => /serving on (http:\S+)/.test(s.out()), 30_000), s.out()).toBe(true);
      return { ...s, url: /serving on (http:\S+)/.exec(s.out())![1] };
    };
    const first = await serve();
    const ahead = await postJson(`${first.url}/api/runs`, { plugin: 'worker', input: {} });
    expect(await eventually(() => p!.effects().includes('start lookup:q'), 30_000)).toBe(true);
    const queued = await postJson(`${first.url}/api/runs`, { plugin: 'worker', input: {} });
    expect(queued.body.status).toBe('queued');
    await killHard(first.child);
    const queuedId = queued.body.run_id as string;
    expect(runEvents(p.dir, queuedId).some((e) => e.stream === 'model')).toBe(false);

    p.release();
    const second = await serve();
    for (const id of [ahead.body.run_id as string, queuedId]) {
      let status = '';
      for (const end = Date.now() + 60_000; Date.now() < end && status !== 'completed'; await new Promise((r) => setTimeout(r, 100)))
        status = (await getJson(`${second.url}/api/runs/${id}`)).body.status as string;
      expect(status, `${id}: ${second.out()}`).toBe('completed');
    }
    const events = runEvents(p.dir, queuedId);
    expect(checkEventLog(events)).toEqual([]);
    expect(events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed')?.data).toMatchObject({ attempt: 1, discardFromSeq: null });
    expect(events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'start')).toHaveLength(1);
    expect(existsSync(join(p.dir, 'data', 'runs', queuedId, 'artifacts', 'report.md'))).toBe(true);
  }, 120_000);
});
