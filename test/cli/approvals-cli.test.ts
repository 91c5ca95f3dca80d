/** Approvals at the CLI: --approve-all, --deny-all, and no terminal to ask (denied, saying how to allow). */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
let p: ProjectFixture;
let home = '';
afterEach(() => {
  p?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

function run(flags: string[]) {
  p = makeProject({
    '.runtrail/agents/careful.md': agentFile('name: careful\ndescription: asks first\nmodel: script:careful.turns.json\npermissions: { write_artifact: ask }'),
    '.runtrail/agents/careful.turns.json': JSON.stringify([
      { toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] },
      { text: 'finished' },
    ]),
  });
  home = mkdtempSync(join(tmpdir(), 'runtrail-home-'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' };
  const r = spawnSync(process.execPath, [MAIN, 'run', 'careful', '--json', ...flags], {
    cwd: p.dir,
    env,
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const frames = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; step?: { name?: string; phase?: string; approval?: { status: string; by?: string } } });
  const write = frames.filter((f) => f.type === 'step' && f.step?.name === 'write_artifact').at(-1)!.step!;
  return { code: r.status, stderr: r.stderr, write };
}

describe.runIf(existsSync(MAIN))('runtrail run and approvals', () => {
  it('--approve-all lets the call through', () => {
    const r = run(['--approve-all']);
    expect(r.code).toBe(0);
    expect(r.write).toMatchObject({ phase: 'ok', approval: { status: 'approved', by: 'cli' } });
  });

  it('--deny-all refuses it; the model reads the denial and the run goes on', () => {
    const r = run(['--deny-all']);
    expect(r.code).toBe(0);
    expect(r.write).toMatchObject({ phase: 'fail', approval: { status: 'denied', by: 'cli' } });
  });

  it('without a terminal and without a flag the call is denied at once, saying how to allow it', () => {
    const r = run([]);
    expect(r.write).toMatchObject({ phase: 'fail', approval: { status: 'denied', by: 'cli' } });
    expect(r.stderr).toContain('needs approval and there is no terminal to ask: denied (use --approve-all or --deny-all)');
  });
});
