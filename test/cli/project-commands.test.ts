/**
 * Project commands end to end through the built binary: `runtrail init` writes a project that runs to
 * completion offline; `agents`, `validate`, `--strict`, `run <agent>`; `serve` runs project agents over
 * HTTP (their own script models allowed, a request body's refused), lists them with their schema and
 * source, and with --watch picks up a new agent without a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { agentFile, makeProject, NOTES_AGENT, type ProjectFixture } from '../extensions/project-fixture.js';
import { getJson, postJson } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
const children: ChildProcess[] = [];
const fixtures: ProjectFixture[] = [];
let home = '';

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const f of fixtures.splice(0)) f.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

function runtrail(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  home ||= mkdtempSync(join(tmpdir(), 'runtrail-home-'));
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) clean[k] = v;
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: { ...clean, HOME: home, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const done = new Promise<{ code: number | null; out: string; err: string }>((r) => child.once('close', (code) => r({ code, out, err })));
  return { child, done, out: () => out, err: () => err };
}

function project(files: Record<string, string>) {
  const p = makeProject(files);
  fixtures.push(p);
  return p;
}

describe.runIf(existsSync(MAIN))('your own agents through the CLI', () => {
  it('init writes a project whose printed command runs to completion offline', async () => {
    const base = project({});
    const init = await runtrail(['init', 'demo'], base.dir).done;
    expect(init.code).toBe(0);
    // outside a checkout the printed line names this runtrail's path (test/cli/printed-commands runs it in a shell)
    const command = /\n {2}(node \S+ run .+)\n/.exec(init.out)![1];
    expect(command).toBe(`node ${MAIN} run notes-report --project demo --input notes=demo/notes.md`);
    const run = await runtrail(command.split(' ').slice(2), base.dir).done;
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/✓ run run_\S+ completed/);
    const runs = join(base.dir, 'demo', '.runtrail', 'runs');
    const id = /✓ run (run_\S+) completed/.exec(run.out)![1];
    const counts = JSON.parse(readFileSync(join(runs, id, 'artifacts', 'word_counts.json'), 'utf8')) as {
      words: number;
      top: Array<{ word: string; count: number }>;
    };
    expect(counts.words).toBe(
      readFileSync(join(base.dir, 'demo', 'notes.md'), 'utf8')
        .toLowerCase()
        .match(/[\p{L}\p{N}']+/gu)!.length,
    );
    expect(counts.top[0]).toEqual({ word: 'the', count: 5 });
    // a second init into the same folder writes nothing
    const again = await runtrail(['init', 'demo'], base.dir).done;
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/demo\/\.runtrail\/agents\/notes-report\.md already exists/);
  }, 60_000);

  it('agents lists every agent with its source; validate exits 0, or 2 with one line per problem', async () => {
    const p = project({ '.runtrail/agents/notes.md': NOTES_AGENT });
    const agents = await runtrail(['agents', '--json'], p.dir).done;
    expect(agents.code).toBe(0);
    const rows = JSON.parse(agents.out) as Array<{ name: string; source: string; version: string; inputs: string[] }>;
    expect(rows.find((r) => r.name === 'notes')).toMatchObject({ source: 'project .runtrail/agents/notes.md', version: '1.2.0', inputs: ['changes'] });
    expect(rows.find((r) => r.name === 'feedbacklens')).toMatchObject({ source: 'builtin' });
    expect((await runtrail(['validate'], p.dir).done).code).toBe(0);

    p.write('.runtrail/agents/broken.md', agentFile('name: broken\ndescription: d\nartifacts:\n  - path: ../x.md'));
    p.write('.runtrail/agents/typed.md', agentFile('name: typed\ndescription: d\nartifacts:\n  - path: y.txt\n    type: pdf'));
    p.write('.runtrail/plugins/bad.mjs', 'export default 42;\n');
    const v = await runtrail(['validate', '--project', p.dir], tmpdir()).done;
    expect(v.code).toBe(2);
    expect(v.out.trim().split('\n').sort()).toEqual([
      '.runtrail/agents/broken.md: artifacts[0].path: must stay inside artifacts/ (no ".."), got "../x.md"',
      '.runtrail/agents/typed.md: artifacts[0].type: must be one of markdown, json, text, csv',
      '.runtrail/plugins/bad.mjs: its default export must be a plugin object, got number',
    ]);
    // without --strict the others still run; with it, a broken definition stops the command
    const list = await runtrail(['agents'], p.dir).done;
    expect(list.code).toBe(0);
    expect(list.out).toContain('notes 1.2.0');
    expect(list.err).toContain('runtrail: .runtrail/plugins/bad.mjs: its default export must be a plugin object');
    const strict = await runtrail(['agents', '--strict'], p.dir).done;
    expect(strict.code).toBe(2);
    expect(strict.err).toContain('--strict stops here');
  }, 60_000);

  it('run <agent> with the offline model fails with offline_unsupported (exit 1)', async () => {
    const p = project({ '.runtrail/agents/notes.md': NOTES_AGENT, 'changes.md': '- a\n' });
    const r = await runtrail(['run', 'notes', '--input', 'changes=changes.md'], p.dir).done;
    expect(r.code).toBe(1);
    expect(r.out).toContain('the offline model cannot run notes: it has no reference procedure to follow');
  }, 60_000);
});

describe.runIf(existsSync(MAIN))('your own agents through the server', () => {
  async function serve(dir: string, extra: string[] = []) {
    const s = runtrail(['serve', '--port', '0', ...extra], dir);
    expect(await eventually(() => /serving on (http:\S+)/.test(s.out()), 20_000)).toBe(true);
    return { ...s, url: /serving on (http:\S+)/.exec(s.out())![1] };
  }

  it('runs a project agent with its own script model, refuses a script model in the body, lists agents with schema and source', async () => {
    const p = project({
      '.runtrail/agents/hello.md': agentFile(
        'name: hello\ndescription: says hello\nmodel: script:hello.turns.json\ninput: { type: object, properties: { who: { type: string } }, required: [who] }\nartifacts:\n  - path: hello.md\n    headings: [Hello]',
      ),
      '.runtrail/agents/hello.turns.json': JSON.stringify([
        { toolCalls: [{ name: 'write_artifact', args: { path: 'hello.md', content: '## Hello\n\nworld\n' } }] },
        { text: 'said hello' },
      ]),
      'turns.json': JSON.stringify([{ text: 'x' }]),
    });
    const s = await serve(p.dir);
    const plugins = await getJson(`${s.url}/api/plugins`);
    const hello = (plugins.body.plugins as Array<{ name: string }>).find((x) => x.name === 'hello');
    expect(hello).toMatchObject({
      source: { kind: 'project', file: '.runtrail/agents/hello.md' },
      model: 'script:hello.turns.json',
      inputSchema: { required: ['who'] },
    });
    const refused = await postJson(`${s.url}/api/runs`, { plugin: 'hello', input: { who: 'x' }, model: 'script:turns.json' });
    expect(refused.status).toBe(400);
    const bad = await postJson(`${s.url}/api/runs`, { plugin: 'hello', input: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues).toEqual([{ path: 'input.who', message: 'is required and was not given' }]);
    const ok = await postJson(`${s.url}/api/runs`, { plugin: 'hello', input: { who: 'x' } });
    expect(ok.status).toBe(201);
    let status = '';
    for (let i = 0; i < 100 && !['completed', 'failed'].includes(status); i++) {
      status = (await getJson(`${s.url}/api/runs/${ok.body.run_id}`)).body.status;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('completed');
  }, 60_000);

  it('serve --watch picks up a new agent for the next run without a restart', async () => {
    const p = project({ '.runtrail/agents/one.md': agentFile('name: one\ndescription: first') });
    const s = await serve(p.dir, ['--watch']);
    const names = async () => ((await getJson(`${s.url}/api/plugins`)).body.plugins as Array<{ name: string }>).map((x) => x.name);
    expect(await names()).toContain('one');
    writeFileSync(join(p.dir, '.runtrail', 'agents', 'two.md'), agentFile('name: two\ndescription: second'));
    expect(await eventually(() => s.err().includes('definitions reloaded'), 10_000)).toBe(true);
    expect(await names()).toEqual(expect.arrayContaining(['one', 'two']));
    const created = await postJson(`${s.url}/api/runs`, { plugin: 'two', input: {} });
    expect(created.status).toBe(201);
  }, 60_000);
});
