import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { goodTurns, notesPlugin } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider, type FakeTurn } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, type TestEnv } from '../runtime/fixtures/setup.js';
import { Sink } from './sink.js';

let env: TestEnv;
beforeEach(() => {
  env = makeEnv();
});
afterEach(() => env.cleanup());

function deps(turns: FakeTurn[] | (() => FakeTurn[]) = goodTurns(), extra: Partial<CliDeps> = {}) {
  const stdout = new Sink();
  const stderr = new Sink();
  const d: CliDeps = {
    agents: [notesPlugin()],
    stdout,
    stderr,
    env: { RUNTRAIL_DATA_DIR: env.dataDir },
    cwd: env.dir,
    skillsDir: env.skillsDir,
    providerResolver: () => new FakeProvider(typeof turns === 'function' ? turns() : turns),
    ...extra,
  };
  return { d, stdout, stderr };
}

describe('runtrail run', () => {
  it('runs live in text, exits 0 and says where the artifacts are', async () => {
    const { d, stdout } = deps();
    const code = await runCli(['run', 'notes', '--input', 'notes_path=notes.txt', '--goal', 'count them'], d);
    expect(code).toBe(0);
    expect(stdout.text).toContain('Done: 3 notes.');
    expect(stdout.text).toMatch(/✓ run run_\d{8}_\d{6}_\d{6} completed/);
    const m = /run folder: (.*)/.exec(stdout.text);
    expect(m && existsSync(join(m[1], 'artifacts', 'report.md'))).toBe(true);
    expect(stdout.text).toContain(join('artifacts', 'count.json'));
  });

  it('--json prints one wire frame per line, byte-identical to replay --format ndjson', async () => {
    const { d, stdout, stderr } = deps();
    expect(await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`, '--json'], d)).toBe(0);
    const lines = stdout.text.trimEnd().split('\n');
    for (const l of lines) expect(typeof JSON.parse(l).type).toBe('string');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: 'done', content: 'Done: 3 notes.' });
    expect(lines.some((l) => JSON.parse(l).type === 'step')).toBe(true);
    const runId = /run (run_\S+) completed/.exec(stderr.text)![1];

    const r = deps();
    expect(await runCli(['replay', runId, '--format', 'ndjson'], r.d)).toBe(0);
    expect(r.stdout.text).toBe(stdout.text);

    const sse = deps();
    expect(await runCli(['replay', runId, '--format', 'sse'], sse.d)).toBe(0);
    expect(sse.stdout.text.startsWith('id: ')).toBe(true);
    expect(sse.stdout.text.split('\n\n').filter(Boolean)).toHaveLength(lines.length);

    const text = deps();
    expect(await runCli(['replay', runId], text.d)).toBe(0);
    expect(text.stdout.text).toContain('Done: 3 notes.');
  });

  it('exits 1 for a failed run', async () => {
    const { d, stdout } = deps([{ text: 'nothing done' }]);
    expect(await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`], d)).toBe(1);
    expect(stdout.text).toMatch(/✗ run .* failed/);
  });

  it('exits 2 for bad usage or input, naming the field and the valid plugins', async () => {
    let r = deps();
    expect(await runCli(['run', 'nope'], r.d)).toBe(2);
    expect(r.stderr.text).toContain('unknown plugin "nope"');
    expect(r.stderr.text).toContain('valid plugins: notes');
    r = deps();
    expect(await runCli(['run', 'notes', '--input', 'notes_path=missing.txt'], r.d)).toBe(2);
    expect(r.stderr.text).toContain('input.notes_path');
    r = deps();
    expect(await runCli(['run', 'notes', '--input', 'oops'], r.d)).toBe(2);
    expect(r.stderr.text).toContain('expected key=value');
    r = deps();
    expect(await runCli(['run', 'notes', '--bogus'], r.d)).toBe(2);
    expect(r.stderr.text).toContain('unknown option --bogus');
    r = deps();
    expect(await runCli(['run', 'notes', '--input-json', '[1]'], r.d)).toBe(2);
    expect(r.stderr.text).toContain('must be a JSON object');
    r = deps();
    expect(await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`, '--max-iterations', 'x'], r.d)).toBe(2);
    r = deps();
    expect(await runCli(['fly'], r.d)).toBe(2);
    expect(r.stderr.text).toContain('unknown command "fly"; commands: run, runs');
    r = deps();
    expect(await runCli(['replay', 'run_20200101_000000_000000', '--format', 'xml'], r.d)).toBe(2);
  });

  it('reads --input-json from a file and coerces key=value numbers the schema wants', async () => {
    const plugin = notesPlugin();
    const { z } = await import('zod');
    plugin.inputSchema = z.strictObject({ notes_path: z.string(), title: z.string().optional(), max: z.number().int().optional() }) as never;
    writeFileSync(join(env.dir, 'in.json'), JSON.stringify({ notes_path: env.notesPath }));
    const { d } = deps(goodTurns(), { agents: [plugin] });
    expect(await runCli(['run', 'notes', '--input-json', '@in.json', '--input', 'max=7', '--input', 'title=42', '--json'], d)).toBe(0);
    const runs = deps();
    await runCli(['runs', '--json'], runs.d);
    const runId = JSON.parse(runs.stdout.text).runs[0].run_id;
    const { readFileSync } = await import('node:fs');
    const req = JSON.parse(readFileSync(join(env.dataDir, 'runs', runId, 'input', 'request.json'), 'utf8'));
    expect(req.input).toMatchObject({ max: 7, title: '42' });
  });

  it('Ctrl-C cancels the run cleanly and exits 130', async () => {
    let interrupt: (() => void) | null = null;
    const { d, stderr } = deps([{ hang: true }], {
      onInterrupt: (h) => {
        interrupt = h;
        setImmediate(() => interrupt?.());
        return () => (interrupt = null);
      },
    });
    expect(await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`], d)).toBe(130);
    expect(stderr.text).toContain('cancelling');
    const l = deps();
    await runCli(['runs', '--json'], l.d);
    expect(JSON.parse(l.stdout.text).runs[0].status).toBe('cancelled');
  });
});

describe('runtrail serve', () => {
  it('starts the server on the data dir and stops on Ctrl-C', async () => {
    const calls: Array<{ dataDir: string; port?: number; host?: string }> = [];
    let closed = false;
    const { d, stdout } = deps([], {
      serve: async (o) => {
        calls.push(o);
        return { url: 'http://127.0.0.1:1234', close: async () => void (closed = true) };
      },
      onInterrupt: (h) => {
        setImmediate(h);
        return () => {};
      },
    });
    expect(await runCli(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', 'd2'], d)).toBe(0);
    expect(calls[0]).toMatchObject({ dataDir: join(env.dir, 'd2'), port: 0, host: '127.0.0.1' });
    expect(stdout.text).toContain('serving on http://127.0.0.1:1234');
    expect(closed).toBe(true);
    const bad = deps();
    expect(await runCli(['serve', '--port', 'abc'], { ...bad.d, serve: d.serve })).toBe(2);
  });
});

describe('runtrail start', () => {
  it('runs feedbacklens on the bundled example with the offline model and prints the artifacts', async () => {
    const { builtinPlugins } = await import('../../src/plugins/builtin-plugins.js');
    const { d, stdout } = deps([], { agents: builtinPlugins(), providerResolver: undefined, skillsDir: undefined });
    expect(await runCli(['start'], d)).toBe(0);
    expect(stdout.text).toContain('model offline:');
    for (const f of ['feedback_analysis.json', 'product_backlog.json', 'insight_report.md']) expect(stdout.text).toContain(join('artifacts', f));
  });

  it('says so when the example data is missing', async () => {
    const { builtinPlugins } = await import('../../src/plugins/builtin-plugins.js');
    const { d, stderr } = deps([], { agents: builtinPlugins(), exampleCsv: join(env.dir, 'none.csv') });
    expect(await runCli(['start'], d)).toBe(2);
    expect(stderr.text).toContain('example data not found');
  });
});

describe('runtrail runs / show / plugins / skills', () => {
  it('lists and shows runs', async () => {
    const { d } = deps();
    await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`, '--json'], d);
    const l = deps();
    expect(await runCli(['runs'], l.d)).toBe(0);
    expect(l.stdout.text).toMatch(/run_\S+\s+completed\s+notes/);
    const runId = /(run_\S+)/.exec(l.stdout.text)![1];
    const s = deps();
    expect(await runCli(['show', runId], s.d)).toBe(0);
    expect(s.stdout.text).toContain('status     completed');
    expect(s.stdout.text).toContain('artifacts/report.md');
    const sj = deps();
    expect(await runCli(['show', runId, '--json'], sj.d)).toBe(0);
    expect(JSON.parse(sj.stdout.text).manifest.documents).toHaveLength(2);
    const missing = deps();
    expect(await runCli(['show', 'run_20200101_000000_000000'], missing.d)).toBe(1);
    expect(missing.stderr.text).toContain('not found');
    const none = deps();
    expect(await runCli(['runs', '--status', 'failed'], none.d)).toBe(0);
    expect(none.stdout.text).toBe('no runs\n');
    const bad = deps();
    expect(await runCli(['runs', '--status', 'weird'], bad.d)).toBe(2);
  });

  it('lists plugins with their inputs and skills with their plugins', async () => {
    const p = deps();
    expect(await runCli(['plugins'], p.d)).toBe(0);
    expect(p.stdout.text).toContain('notes 1.2.3');
    expect(p.stdout.text).toContain('input: notes_path, title?');
    const s = deps();
    expect(await runCli(['skills'], s.d)).toBe(0);
    expect(s.stdout.text).toContain('notes_skill 0.1.0  plugins: notes');
  });
});
