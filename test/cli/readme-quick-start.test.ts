/**
 * The README's quick start, its two commands in the order a newcomer runs them, in a copy of the
 * checkout: `npm start` (the `start` command, which writes its run into the checkout's `.runtrail/`)
 * and then `npm test`'s lint step (`biome check .`), which checks the repository's own files only
 * and so still passes. `start` ends by saying how to look at the run it made.
 * The copy holds the tracked files (what a fresh clone has); installing and building are left out.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { builtinPlugins } from '../../src/plugins/builtin-plugins.js';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { Sink } from './sink.js';

const ROOT = runtrailPackageRoot();
const BIOME = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');

let base = '';
let checkout = '';

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'runtrail-quick-start-'));
  checkout = join(base, 'runtrail');
  const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  if (tracked.status !== 0) throw new Error(`git ls-files failed in ${ROOT}: ${tracked.stderr}`);
  for (const file of tracked.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    cpSync(join(ROOT, file), join(checkout, file));
  }
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('the README quick start: npm start, then npm test', () => {
  it('start leaves its run in .runtrail/runs, says what to do next, and biome check . still passes', async () => {
    const stdout = new Sink();
    const stderr = new Sink();
    const deps: CliDeps = { agents: builtinPlugins(), stdout, stderr, env: { HOME: base, PATH: '/usr/bin:/bin' }, cwd: checkout };
    expect(await runCli(['start'], deps), stderr.text).toBe(0);

    const runs = readdirSync(join(checkout, '.runtrail', 'runs')).filter((n) => n.startsWith('run_'));
    expect(runs).toHaveLength(1);
    const runId = runs[0];
    // the next steps, written for a shell in the checkout
    expect(stdout.text).toContain(`npx runtrail serve`);
    expect(stdout.text).toContain(`http://127.0.0.1:7777/#/runs/${runId}`);
    expect(stdout.text).toContain(`npx runtrail show ${runId}`);

    const lint = spawnSync(process.execPath, [BIOME, 'check', '.'], { cwd: checkout, encoding: 'utf8', timeout: 60_000 });
    expect(lint.status, `${lint.stdout}\n${lint.stderr}`).toBe(0);
    expect(`${lint.stdout}${lint.stderr}`).not.toContain('.runtrail');
  }, 120_000);
});
