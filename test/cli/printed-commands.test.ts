/**
 * Every command Runtrail prints runs as printed, in a plain shell (no node_modules/.bin on PATH),
 * after the quick start: the line `init` prints, the `--help` hint of a usage error, a "did you
 * mean" suggestion, and the README's command lines. Each line is run by `sh -c` exactly as printed,
 * from a checkout (a folder with the package's package.json, dist and node_modules) and from a
 * folder outside it.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';

const ROOT = runtrailPackageRoot();
const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const BUILT = existsSync(MAIN);
if (!BUILT) console.warn(`printed-commands.test.ts skipped: ${MAIN} is missing (npm test builds first)`);

let base = '';
let checkout = '';
let outside = '';
let npmCache = '';

/** A user's plain shell: node, npm and the system's tools; nothing npm adds to a script's PATH. */
function shell(line: string, cwd: string): { code: number | null; out: string; err: string } {
  const env: NodeJS.ProcessEnv = {
    PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: process.env.HOME ?? base,
    NO_COLOR: '1',
    npm_config_cache: npmCache,
    npm_config_update_notifier: 'false',
  };
  const r = spawnSync('sh', ['-c', line], { cwd, env, encoding: 'utf8', timeout: 90_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The command line `init` prints under "Run it …:". */
function printedRunLine(out: string): string {
  const m = /Run it to completion offline[^\n]*:\n {2}(.+)\n/.exec(out);
  expect(m, out).not.toBeNull();
  return m![1];
}

beforeAll(() => {
  if (!BUILT) return;
  base = realpathSync(mkdtempSync(join(tmpdir(), 'printed-commands-')));
  // a checkout as the quick start leaves it: package.json, dist/, node_modules/, the bundled files
  checkout = join(base, 'checkout');
  mkdirSync(checkout);
  copyFileSync(join(ROOT, 'package.json'), join(checkout, 'package.json'));
  for (const d of ['dist', 'node_modules', 'examples', 'skills']) symlinkSync(join(ROOT, d), join(checkout, d));
  outside = join(base, 'elsewhere');
  mkdirSync(outside);
  npmCache = join(base, 'npm-cache');
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe.runIf(BUILT)('printed commands run as printed', () => {
  it('inside the checkout: init prints `npx runtrail run …`, and that line completes', () => {
    const init = shell('npx runtrail init my-project', checkout);
    expect(init.code, init.err).toBe(0);
    const line = printedRunLine(init.out);
    expect(line).toBe('npx runtrail run notes-report --project my-project --input notes=my-project/notes.md');
    const run = shell(line, checkout);
    expect(run.code, run.err + run.out).toBe(0);
    expect(run.out).toMatch(/✓ run run_\S+ completed/);
  });

  it('outside the checkout: init prints a line with the path of this runtrail, and that line completes', () => {
    const init = shell(`node ${MAIN} init 'my notes'`, outside);
    expect(init.code, init.err).toBe(0);
    const line = printedRunLine(init.out);
    // npx runtrail here would ask the npm registry for a package named runtrail
    expect(line.startsWith(`node ${MAIN} run notes-report`)).toBe(true);
    const run = shell(line, outside);
    expect(run.code, run.err + run.out).toBe(0);
    expect(run.out).toMatch(/✓ run run_\S+ completed/);
  });

  it("a usage error's hint and suggestion are lines that run", () => {
    const r = shell('npx runtrail run feedbacklens examples/feedback.csv --data-dir data', checkout);
    expect(r.code).toBe(2);
    // one message, no usage dump
    expect(r.err.trim().split('\n')).toEqual([
      'runtrail: unexpected argument examples/feedback.csv; did you mean --input csv_path=examples/feedback.csv?',
      '(npx runtrail run --help lists the options)',
    ]);
    const help = shell('npx runtrail run --help', checkout);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--input key=value');
    const fixed = shell('npx runtrail run feedbacklens --input csv_path=examples/feedback.csv --data-dir data', checkout);
    expect(fixed.code, fixed.err).toBe(0);
  });

  it("the README's command lines are runnable as written, and its project lines complete in a plain shell", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const lines: string[] = [];
    let inBlock = false;
    for (const l of readme.split('\n')) {
      if (l.startsWith('```')) inBlock = !inBlock;
      else if (inBlock) lines.push(l);
    }
    // a bare `runtrail …` fails with "command not found" after the quick start; `node dist/…` only works from the checkout root
    expect(lines.filter((l) => /^\s*runtrail\s/.test(l))).toEqual([]);
    const own = lines.filter((l) => /^npx runtrail (init|run notes-report|agents|validate)\b/.test(l)).map((l) => l.replace(/\s+#.*$/, ''));
    expect(own).toEqual([
      'npx runtrail init my-project',
      'npx runtrail run notes-report --project my-project --input notes=my-project/notes.md',
      'npx runtrail agents',
      'npx runtrail validate',
    ]);
    const readmeDir = join(base, 'readme-checkout');
    mkdirSync(readmeDir);
    copyFileSync(join(checkout, 'package.json'), join(readmeDir, 'package.json'));
    for (const d of ['dist', 'node_modules', 'examples', 'skills']) symlinkSync(join(ROOT, d), join(readmeDir, d));
    for (const line of own) {
      const r = shell(line, readmeDir);
      expect(r.code, `${line}\n${r.err}`).toBe(0);
    }
  });
});
