/**
 * A Runtrail killed with SIGKILL runs no handler, so its runs' children used to live on
 * forever (after a restart too). In the sandbox they die with the server (bubblewrap's
 * --die-with-parent and the sandbox's own pid namespace). On the host (the operator's sandbox off,
 * or an elevated command) each live session's group is in the run's runtime/processes.json; the
 * next Runtrail on the data dir ends them and says so in the run's diagnosis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { getJson, postJson } from '../server/helpers.js';
import { eventually, liveProcesses, marker } from '../tools/helpers.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
const children: ChildProcess[] = [];
let dir = '';

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function runtrail(args: string[], env: NodeJS.ProcessEnv = {}) {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) clean[k] = v;
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { ...clean, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, exited };
}

async function killHard(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('close', r)));
}

const runsDir = () => join(dir, 'data', 'runs');
/**
 * These runs end interrupted (config.json durability.resume: false): what is left of them is ended
 * and said. `host`: the operator turned the sandbox off, so the commands run on the host.
 */
function noResume(sandbox: 'host' | 'sandboxed'): void {
  mkdirSync(join(dir, '.runtrail'), { recursive: true });
  const config = { durability: { resume: false }, ...(sandbox === 'host' ? { sandbox: { mode: 'off' } } : {}) };
  writeFileSync(join(dir, '.runtrail', 'config.json'), JSON.stringify(config));
}
/**
 * The run's record of its process groups. The spawn comes first (a pid exists only after the fork),
 * so `ps` can show the children an instant before the record is written: a test waits for it.
 */
const ledgerOf = (runId: string) => join(runsDir(), runId, 'runtime', 'processes.json');
/** The command's processes, not the `runtrail run … command=sleep M` whose arguments name it too. */
const commandProcesses = (m: string) => liveProcesses(m).filter((l) => !l.includes(MAIN));

describe.runIf(existsSync(MAIN))('children of a Runtrail killed with SIGKILL', () => {
  it('on the host: are ended when the server starts again, and the run says so', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-sigkill-'));
    noResume('host');
    const m = marker();
    const serve = () => {
      const p = runtrail(['serve', '--port', '0', '--data-dir', 'data'], { RUNTRAIL_ENABLE_SHELL_TASK: '1' });
      return eventually(() => /serving on (http:\S+)/.test(p.out()), 20_000).then(() => ({ ...p, url: /serving on (http:\S+)/.exec(p.out())![1] }));
    };
    const first = await serve();
    const { status, body } = await postJson(`${first.url}/api/runs`, { plugin: 'shell_task', input: { command: `sleep ${m}` } });
    expect(status).toBe(201);
    const runId = body.run_id as string;
    // `/bin/sh -c sleep M` and `sleep M`
    expect(await eventually(() => liveProcesses(m).length === 2, 20_000)).toBe(true);
    expect(await eventually(() => existsSync(ledgerOf(runId)))).toBe(true);
    await killHard(first.child);
    expect(liveProcesses(m)).toHaveLength(2); // what the defect was: nothing ends them

    const second = await serve();
    const run = await getJson(`${second.url}/api/runs/${runId}`);
    expect(run.body.status).toBe('failed');
    expect(run.body.diagnosis.code).toBe('interrupted');
    expect(run.body.diagnosis.detail).toContain('ended 2 leftover processes');
    expect(liveProcesses(m)).toEqual([]);
    expect(existsSync(ledgerOf(runId))).toBe(false);
  }, 60_000);

  it('on the host: are ended by the next runtrail command on the data dir after `runtrail run` was killed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-sigkill-'));
    noResume('host');
    const m = marker();
    const run = runtrail(['run', 'shell_task', '--input', `command=sleep ${m}`, '--data-dir', 'data']);
    expect(await eventually(() => commandProcesses(m).length === 2, 20_000)).toBe(true);
    const runId = /▶ (run_\d{8}_\d{6}_\d{6})/.exec(run.out())![1];
    expect(await eventually(() => existsSync(ledgerOf(runId)))).toBe(true);
    await killHard(run.child);
    expect(commandProcesses(m)).toHaveLength(2);

    const list = runtrail(['runs', '--data-dir', 'data']);
    expect(await list.exited).toBe(0);
    expect(commandProcesses(m)).toEqual([]);
    const status = JSON.parse(readFileSync(join(runsDir(), runId, 'runtime', 'run_status.json'), 'utf8')) as { status: string; diagnosis: { detail: string } };
    expect(status.status).toBe('failed');
    expect(status.diagnosis.detail).toMatch(/^ended 2 leftover processes \(sleep /);
  }, 60_000);

  it('in the sandbox: end with the server itself, before any restart; the next server says the run was interrupted', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-sigkill-'));
    noResume('sandboxed');
    const m = marker();
    const serve = () => {
      const p = runtrail(['serve', '--port', '0', '--data-dir', 'data'], { RUNTRAIL_ENABLE_SHELL_TASK: '1' });
      return eventually(() => /serving on (http:\S+)/.test(p.out()), 20_000).then(() => ({ ...p, url: /serving on (http:\S+)/.exec(p.out())![1] }));
    };
    const first = await serve();
    const { body } = await postJson(`${first.url}/api/runs`, { plugin: 'shell_task', input: { command: `sleep ${m}` } });
    const runId = body.run_id as string;
    // the sleep itself, inside the sandbox (bubblewrap's own processes name it too)
    expect(await eventually(() => liveProcesses(m).some((l) => / sleep \S+$/.test(l) && !l.includes('bwrap')), 20_000)).toBe(true);
    await killHard(first.child);
    expect(await eventually(() => liveProcesses(m).length === 0, 10_000)).toBe(true);

    const second = await serve();
    const run = await getJson(`${second.url}/api/runs/${runId}`);
    expect(run.body.status).toBe('failed');
    expect(run.body.diagnosis.code).toBe('interrupted');
  }, 60_000);
});
