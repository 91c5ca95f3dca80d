import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runComputeSkill, type ComputeSkillSpec } from '../../src/skills/compute-skill-runner.js';
import { createExecuteSkillTool } from '../../src/skills/execute-skill-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { liveProcesses, marker, recordingReporter, type ReporterCall } from '../tools/helpers.js';

let dir: string;
let registry: ProcessRegistry | undefined;

function skill(name: string, source: string): ComputeSkillSpec {
  writeFileSync(join(dir, `${name}.mjs`), source);
  return { name, dir, entry: { command: 'node', args: [`{skill_dir}/${name}.mjs`] } };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-skill-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await registry?.shutdown();
  registry = undefined;
});

function run(spec: ComputeSkillSpec, extra: Partial<Parameters<typeof runComputeSkill>[0]> = {}) {
  registry ??= new ProcessRegistry({ killGraceMs: 300 });
  return runComputeSkill({ registry, scopeKey: 'run_s', skill: spec, cwd: dir, ...extra });
}

describe('compute skill runner', () => {
  it('maps progress to the reporter, keeps logs and returns the result', async () => {
    registry = new ProcessRegistry();
    const calls: ReporterCall[] = [];
    const s = skill(
      'ok',
      `let input = ''; for await (const c of process.stdin) input += c;
       const p = (o) => console.log(JSON.stringify(o));
       p({ type: 'progress', stage: 'scan', current: 1, total: 2, message: 'half', payload: { api_key: 'sk-x', rows: 1 } });
       p({ type: 'log', level: 'info', message: 'hello log' });
       console.log('not json at all');
       console.error('a warning on stderr');
       p({ type: 'progress', stage: 'write', current: 2, total: 2 });
       p({ type: 'result', data: { echoed: JSON.parse(input), n: 42 } });`,
    );
    const out = await run(s, { input: { a: 1 }, reporter: recordingReporter(calls) });
    expect(out.ok).toBe(true);
    expect(out.data).toEqual({ echoed: { a: 1 }, n: 42 });
    expect(out.logs).toContainEqual({ level: 'info', message: 'hello log' });
    expect(out.logs).toContainEqual({ level: 'stdout', message: 'not json at all' });
    expect(out.garbageLines).toBe(1);
    expect(out.stderr).toContain('a warning on stderr');
    expect(calls.map((c) => c.method)).toEqual(['start', 'progress', 'progress', 'complete']);
    expect(calls[1].arg).toMatchObject({ stage: 'scan', current: 1, total: 2, message: 'half' });
  });

  it('fails with a Diagnosis on a non-zero exit, keeping stderr', async () => {
    const calls: ReporterCall[] = [];
    const out = await run(skill('crash', `console.error('boom: disk on fire'); process.exit(3);`), { reporter: recordingReporter(calls) });
    expect(out.ok).toBe(false);
    expect(out.exitCode).toBe(3);
    expect(out.diagnosis).toMatchObject({ code: 'skill_failed', severity: 'error' });
    expect(out.diagnosis?.summary).toContain('exited with code 3');
    expect(out.diagnosis?.detail).toContain('disk on fire');
    expect(calls.at(-1)?.method).toBe('fail');
  });

  it('fails when the skill exits 0 without a result', async () => {
    const out = await run(skill('noresult', `console.log(JSON.stringify({ type: 'log', level: 'info', message: 'done?' }));`));
    expect(out.ok).toBe(false);
    expect(out.diagnosis?.code).toBe('skill_no_result');
  });

  it('survives garbage on stdout: binary, half JSON, arrays, an endless line', async () => {
    const out = await run(
      skill(
        'garbage',
        `process.stdout.write(Buffer.from([0, 255, 10, 123, 34, 10]));
         console.log('[1,2,3]'); console.log('{"type":"progress"'); console.log('{"type":"unknown"}');
         process.stdout.write('x'.repeat(3_000_000) + '\\n');
         console.log(JSON.stringify({ type: 'result', data: 'still fine' }));`,
      ),
      { maxLineChars: 100_000 },
    );
    expect(out.ok).toBe(true);
    expect(out.data).toBe('still fine');
    expect(out.garbageLines).toBeGreaterThanOrEqual(5);
    expect(out.logs.some((l) => /longer than 100000 chars was dropped/.test(l.message))).toBe(true);
  });

  it('stops a skill printing gigabytes and leaves nothing behind', async () => {
    const m = marker();
    const out = await run(
      skill(
        'flood',
        `import { spawn } from 'node:child_process'; spawn('sleep', ['${m}'], { stdio: 'ignore' }); const b = 'y'.repeat(65536); for (;;) { if (!process.stdout.write(b)) await new Promise((r) => process.stdout.once('drain', r)); }`,
      ),
      { maxOutputBytes: 8 * 1024 * 1024 },
    );
    expect(out.ok).toBe(false);
    expect(out.diagnosis?.code).toBe('skill_output_flood');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('kills a skill that never ends at the timeout, grandchildren included', async () => {
    const m = marker();
    const calls: ReporterCall[] = [];
    const out = await run(
      skill(
        'forever',
        `import { spawn } from 'node:child_process'; spawn('sleep', ['${m}'], { stdio: 'ignore' }); process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`,
      ),
      { timeoutMs: 400, reporter: recordingReporter(calls) },
    );
    expect(out.ok).toBe(false);
    expect(out.diagnosis).toMatchObject({ code: 'skill_timeout', retryable: true });
    expect(liveProcesses(m)).toEqual([]);
    expect(calls.at(-1)?.method).toBe('fail');
  });

  it('cancels on abort and reports cancelled', async () => {
    const m = marker();
    const calls: ReporterCall[] = [];
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const out = await run(
      skill('cancelme', `import { spawn } from 'node:child_process'; spawn('sleep', ['${m}'], { stdio: 'ignore' }); setInterval(() => {}, 1000);`),
      {
        signal: ac.signal,
        reporter: recordingReporter(calls),
      },
    );
    expect(out.diagnosis?.code).toBe('skill_cancelled');
    expect(calls.at(-1)?.method).toBe('cancel');
    expect(liveProcesses(m)).toEqual([]);
  });

  it('reports a missing executable as a start failure', async () => {
    const out = await run({ name: 'ghost', dir, entry: { command: './does-not-exist', args: [] } });
    expect(out.ok).toBe(false);
    expect(out.diagnosis?.code).toBe('skill_spawn_failed');
  });
});

describe('execute_skill tool', () => {
  it('is a skill step that returns the result as content and details', async () => {
    registry = new ProcessRegistry();
    const s = skill('tiny', `console.log(JSON.stringify({ type: 'result', data: { rows: 7 } }));`);
    const tool = createExecuteSkillTool({ registry, skills: [s], cwd: dir });
    expect(tool.kind).toBe('skill');
    expect(tool.name).toBe('execute_skill');
    const r = await tool.execute({ skill: 'tiny', input: {} });
    expect(r.ok).toBe(true);
    expect(r.details?.result).toEqual({ rows: 7 });
    expect(r.content).toContain('"rows": 7');
  });

  it('refuses an unknown skill and bad arguments', async () => {
    const tool = createExecuteSkillTool({ skills: [], cwd: dir });
    const r = await tool.execute({ skill: 'nope' });
    expect(r.ok).toBe(false);
    expect(r.diagnosis?.code).toBe('execute_skill_bad_input');
    expect(r.content).toMatch(/unknown compute skill "nope"/);
    const r2 = await tool.execute({ skill: 5 } as unknown as { skill: string });
    expect(r2.content).toMatch(/invalid arguments/);
  });

  it('reports the skill as a child operation of the tool call', async () => {
    registry = new ProcessRegistry();
    const calls: ReporterCall[] = [];
    const s = skill('child', `console.log(JSON.stringify({ type: 'progress', stage: 'scan' })); console.log(JSON.stringify({ type: 'result', data: 1 }));`);
    const tool = createExecuteSkillTool({ registry, skills: [s], cwd: dir });
    await tool.execute({ skill: 'child' }, { reporter: recordingReporter(calls) });
    expect(calls[0]).toMatchObject({ method: 'child', arg: { targetType: 'skill', source: 'skill' } });
    expect(calls.slice(1).map((c) => c.method)).toEqual(['start', 'progress', 'complete']);
  });
});
