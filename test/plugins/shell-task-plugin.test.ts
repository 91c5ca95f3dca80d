/** shell_task end to end: the real RunService, the offline model, real children. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShellTaskPlugin } from '../../src/plugins/shell-task/shell-task-plugin.js';
import { buildShellTaskReport, outputTail } from '../../src/plugins/shell-task/shell-task-report.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { liveProcesses, marker } from '../tools/helpers.js';

let dir: string;
let svc: RunService;
let registry: ProcessRegistry;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-shell-'));
  registry = new ProcessRegistry();
  svc = new RunService({ dataDir: dir, agents: [createShellTaskPlugin({ registry })], inputRoots: 'any', env: {}, processRegistry: registry });
});
afterAll(async () => {
  await svc.close();
  await registry.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

async function runTask(input: { command: string; workdir?: string }) {
  const created = await svc.create({ plugin: 'shell_task', input });
  const st = await svc.wait(created.run_id);
  const runDir = join(dir, 'runs', st.run_id);
  let report = '';
  try {
    report = readFileSync(join(runDir, 'artifacts', 'report.md'), 'utf8');
  } catch {
    /* asserted by the caller */
  }
  return { st, report, runDir };
}

describe('shell_task with the offline model', () => {
  it('runs a quick command in the foreground and writes report.md', async () => {
    const { st, report } = await runTask({ command: 'echo hello-from-shell-task; echo second line' });
    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(report).toContain('## Command');
    expect(report).toContain('echo hello-from-shell-task; echo second line');
    expect(report).toMatch(/## Exit code\n\n0 \(success\)/);
    expect(report).toMatch(/## Duration\n\n\d+\.\d s/);
    expect(report).toContain('hello-from-shell-task\nsecond line');
    expect(report).not.toMatch(/Process exited/);
  });

  it('backgrounds a long command, follows it with process, and reports a failure honestly', async () => {
    const { st, report, runDir } = await runTask({ command: 'echo started; sleep 6; echo finished; exit 3' });
    expect(st.diagnosis, JSON.stringify(st.diagnosis) + readFileSync(join(runDir, 'runtime', 'events.jsonl'), 'utf8').slice(-3000)).toBeNull();
    expect(st.status).toBe('completed');
    expect(report).toMatch(/## Exit code\n\n3 \(failure\)/);
    expect(report).toContain('started\nfinished');
    const duration = Number(/## Duration\n\n(\d+\.\d) s/.exec(report)?.[1]);
    expect(duration).toBeGreaterThanOrEqual(6);
    const events = readFileSync(join(runDir, 'runtime', 'events.jsonl'), 'utf8');
    expect(events).toContain('"name":"process"');
    expect(events).toContain('"action":"poll"');
  });

  it('reports a command that cannot run (workdir missing) and leaves nothing running', async () => {
    const m = marker();
    const { st, report } = await runTask({ command: `sleep ${m}`, workdir: join(dir, 'no-such-dir') });
    expect(st.status).toBe('completed');
    expect(report).toMatch(/## Exit code\n\nnot run: .*does not exist/);
    expect(liveProcesses(m)).toEqual([]);
  });

  it('rejects an empty command before creating a run', async () => {
    await expect(svc.create({ plugin: 'shell_task', input: { command: '  ' } })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('shell_task report', () => {
  it('fences output that itself contains code fences', () => {
    const md = buildShellTaskReport({
      command: 'cat x.md',
      exit: { exitCode: 0, signal: null, timedOut: false, endedBy: null, durationS: 0.1 },
      output: '```\ncode\n```\n\nProcess exited with code 0 after 0.1 s.',
    });
    expect(md).toContain('````text\n```\ncode\n```\n````');
  });

  it('keeps the last 40 lines of long output and says so', () => {
    const out = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n');
    const t = outputTail(`${out}\n\nProcess exited with code 0 after 1.0 s.`);
    expect(t.cut).toBe(true);
    expect(t.text.split('\n')).toHaveLength(40);
    expect(t.text.endsWith('line 100')).toBe(true);
  });
});
