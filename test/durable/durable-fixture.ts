/**
 * A project for killing runs on purpose: a scripted agent whose tools leave their side effects in
 * files outside the run (counted after), each slow enough to be killed in, and a real second
 * process (`runtrail run`, `resume`, `serve`) to SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { parseEventLines } from '../../src/runtime/storage/event-store.js';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { expect } from 'vitest';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { eventually } from '../tools/helpers.js';

export const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');

/** The effects plugin: `send` is not safe to run twice, `lookup` only reads. Each writes `start <key>`
 *  before it waits `ms` and `done <key>` after, to <project>/effects.log. */
const EFFECTS_PLUGIN = (log: string) => `import { appendFileSync, existsSync } from 'node:fs';
const log = ${JSON.stringify(log)};
const release = ${JSON.stringify(join(dirname(log), 'release'))};
// waits \`ms\`, or less once the test creates <project>/release (a call re-run after a resume need not wait again)
const wait = (ms, signal) => new Promise((r) => {
  const end = Date.now() + ms;
  const tick = () => (Date.now() >= end || signal?.aborted || existsSync(release) ? r() : setTimeout(tick, 20));
  tick();
});
const body = (kind) => async (a, ctx) => {
  appendFileSync(log, 'start ' + kind + ':' + a.key + '\\n');
  await wait(a.ms ?? 0, ctx?.signal);
  appendFileSync(log, 'done ' + kind + ':' + a.key + '\\n');
  return kind + ' ' + a.key + ' ok';
};
const params = { type: 'object', properties: { key: { type: 'string' }, ms: { type: 'number' } }, required: ['key'] };
export default {
  name: 'effects',
  tools: [
    { name: 'send', description: 'Sends a message (not safe to repeat)', parameters: params, execute: body('send') },
    { name: 'lookup', description: 'Looks something up', parameters: params, readOnly: true, execute: body('lookup') },
  ],
};
`;

export interface DurableProject extends ProjectFixture {
  effects(): string[];
  /** Lets the slow calls still waiting (and those run again) finish at once. */
  release(): void;
}

/** `tools`: the agent's tools line (default the effects tools and write_artifact). */
export interface DurableOptions {
  agentExtra?: string;
  config?: Record<string, unknown>;
  tools?: string;
}

export function durableProject(turns: unknown[], opts: DurableOptions = {}): DurableProject {
  const p = makeProject({});
  return { ...p, ...writeDurableAgent(p, turns, opts) };
}

/** Writes the effects plugin and the scripted `worker` agent into a project `p` made elsewhere (a cluster's directory). */
export function writeDurableAgent(
  p: Pick<ProjectFixture, 'dir' | 'write'>,
  turns: unknown[],
  opts: DurableOptions = {},
): Pick<DurableProject, 'effects' | 'release'> {
  const log = join(p.dir, 'effects.log');
  p.write('.runtrail/plugins/effects.mjs', EFFECTS_PLUGIN(log));
  p.write(
    '.runtrail/agents/worker.md',
    agentFile(`name: worker
description: does things that must not happen twice
model: script:worker.turns.json
tools: ${opts.tools ?? '[send, lookup, write_artifact]'}
artifacts:
  - path: report.md
    type: markdown
    headings: [Done]
${opts.agentExtra ?? ''}`),
  );
  p.write('.runtrail/agents/worker.turns.json', JSON.stringify(turns));
  if (opts.config) p.write('.runtrail/config.json', JSON.stringify(opts.config));
  return { release: () => void p.write('release', ''), effects: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) };
}

export function runtrail(dir: string, args: string[], children: ChildProcess[]) {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) clean[k] = v;
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { ...clean, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, exited };
}

/** `runtrail serve` on a free port of loopback, once it says where it serves; `more`: further options. */
export async function serve(dir: string, children: ChildProcess[], more: string[] = []) {
  const s = runtrail(dir, ['serve', '--port', '0', '--data-dir', 'data', ...more], children);
  expect(await eventually(() => /serving on (http:\S+)/.test(s.out()), 30_000), s.out()).toBe(true);
  return { ...s, url: /serving on (http:\S+)/.exec(s.out())![1] };
}

export async function killHard(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('close', r)));
}

export function runEvents(dir: string, runId: string): AgentEvent[] {
  return parseEventLines(readFileSync(join(dir, 'data', 'runs', runId, 'runtime', 'events.jsonl'), 'utf8'));
}

/** The run's events are one gap-free sequence from 1, with exactly one terminal event, last. */
export function checkEventLog(events: AgentEvent[]): string[] {
  const problems: string[] = [];
  events.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`event ${i + 1} has seq ${e.seq}`);
  });
  const terminal = events.filter(
    (e) => e.stream === 'run' && (e.data.type === 'run.completed' || e.data.type === 'run.failed' || e.data.type === 'run.cancelled'),
  );
  if (terminal.length !== 1) problems.push(`${terminal.length} terminal events`);
  if (terminal[0] && terminal[0] !== events.at(-1)) problems.push('the terminal event is not the last');
  return problems;
}
