import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// `npm test` starts with scripts/ensure-chromium.mjs: on a fresh machine the page tests failed with
// "executable doesn't exist at /usr/bin/chromium" because only .ci/run installed the browser.
const CHECKOUT_SCRIPT = resolve('scripts/ensure-chromium.mjs');
const NODE_DIR = dirname(process.execPath);
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A bin folder with a fake apt-get that logs its arguments and, on install, creates the browser. */
function fakeMachine(aptExit = 0) {
  dir = mkdtempSync(join(tmpdir(), 'ensure-chromium-'));
  chmodSync(dir, 0o777);
  // the script runs from a copy in this open folder: the checkout may sit in a folder only its owner
  // can enter (mktemp -d makes mode 0700), and one test runs the script as `nobody`
  const script = join(dir, 'ensure-chromium.mjs');
  copyFileSync(CHECKOUT_SCRIPT, script);
  chmodSync(script, 0o644);
  const browser = join(dir, 'chromium');
  const log = join(dir, 'apt.log');
  writeFileSync(
    join(dir, 'apt-get'),
    `#!/bin/sh\necho "$@" >> ${log}\ncase "$1" in install) [ ${aptExit} = 0 ] && printf '#!/bin/sh\\n' > ${browser} && chmod +x ${browser};; esac\nexit ${aptExit}\n`,
  );
  chmodSync(join(dir, 'apt-get'), 0o755);
  // only our fakes, sh and node: no real apt-get or sudo on this PATH
  const env = { PATH: `${dir}:${NODE_DIR}:/bin:/usr/bin`, RUNTRAIL_CHROMIUM: browser };
  return { browser, log, env, script };
}

function run(m: { script: string }, env: Record<string, string>, asNobody = false) {
  const cmd = asNobody ? 'setpriv' : process.execPath;
  const args = asNobody ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, m.script] : [m.script];
  // cwd: the open folder too (nobody cannot enter the checkout when it is owner-only)
  return spawnSync(cmd, args, { env, cwd: dir, encoding: 'utf8', timeout: 30_000 });
}

const isRoot = process.getuid?.() === 0;

describe('scripts/ensure-chromium.mjs', () => {
  it('does nothing when the browser is there', () => {
    const m = fakeMachine();
    writeFileSync(m.browser, '#!/bin/sh\n');
    chmodSync(m.browser, 0o755);
    const r = run(m, m.env);
    expect(r.status).toBe(0);
    expect(existsSync(m.log)).toBe(false);
  });

  it.runIf(isRoot)('installs Debian chromium with apt-get when it is missing and the user may install', () => {
    const m = fakeMachine();
    const r = run(m, m.env);
    expect(r.status).toBe(0);
    expect(readFileSync(m.log, 'utf8').trim().split('\n')).toEqual(['update', 'install -y --no-install-recommends chromium']);
    expect(existsSync(m.browser)).toBe(true);
  });

  it.runIf(isRoot && existsSync('/usr/bin/setpriv'))('stops at once with one line saying what to install when the user may not install packages', () => {
    const m = fakeMachine();
    // PATH has no sudo on purpose: `command -v sudo` must fail even where the machine has one
    const env = { ...m.env, PATH: `${dir}:${NODE_DIR}:/bin` };
    const r = run(m, env, true);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('apt-get install chromium');
    expect(lines[0]).toContain(m.browser);
    expect(existsSync(m.log)).toBe(false);
  });

  it.runIf(isRoot)('fails with the apt-get step that failed', () => {
    const m = fakeMachine(100);
    const r = run(m, m.env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/apt-get update failed \(exit 100\)/);
    expect(existsSync(m.browser)).toBe(false);
  });
});
