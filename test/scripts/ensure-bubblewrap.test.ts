import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// `npm test` starts with scripts/ensure-bubblewrap.mjs: every command a run starts is sandboxed with
// bubblewrap, which a fresh Debian machine does not have.
const SCRIPT = resolve('scripts/ensure-bubblewrap.mjs');
const NODE_DIR = dirname(process.execPath);
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A bin folder with a fake apt-get that logs its arguments and, on install, creates bwrap. */
function fakeMachine(aptExit = 0) {
  dir = mkdtempSync(join(tmpdir(), 'ensure-bwrap-'));
  chmodSync(dir, 0o777);
  // the script is run from a copy beside the fakes: a checkout in a 0700 folder (/root/…) is not
  // readable by the unprivileged user of the last test
  const script = join(dir, 'ensure-bubblewrap.mjs');
  copyFileSync(SCRIPT, script);
  chmodSync(script, 0o755);
  const bwrap = join(dir, 'bwrap');
  const log = join(dir, 'apt.log');
  writeFileSync(
    join(dir, 'apt-get'),
    `#!/bin/sh\necho "$@" >> ${log}\ncase "$1" in install) [ ${aptExit} = 0 ] && printf '#!/bin/sh\\n' > ${bwrap} && chmod +x ${bwrap};; esac\nexit ${aptExit}\n`,
  );
  chmodSync(join(dir, 'apt-get'), 0o755);
  // only our fakes, sh and node: no real apt-get or sudo on this PATH
  const env = { PATH: `${dir}:${NODE_DIR}:/bin:/usr/bin`, RUNTRAIL_BWRAP: bwrap };
  return { bwrap, log, env, script };
}

function run(m: { env: Record<string, string>; script: string }, env = m.env, asNobody = false) {
  const cmd = asNobody ? 'setpriv' : process.execPath;
  const args = asNobody ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, m.script] : [m.script];
  return spawnSync(cmd, args, { env, encoding: 'utf8', timeout: 30_000, cwd: dir });
}

const isRoot = process.getuid?.() === 0;

describe('scripts/ensure-bubblewrap.mjs', () => {
  it('does nothing when bwrap is there', () => {
    const m = fakeMachine();
    writeFileSync(m.bwrap, '#!/bin/sh\n');
    chmodSync(m.bwrap, 0o755);
    const r = run(m);
    expect(r.status).toBe(0);
    expect(existsSync(m.log)).toBe(false);
  });

  it.runIf(isRoot)("installs Debian's bubblewrap with apt-get when it is missing and the user may install", () => {
    const m = fakeMachine();
    const r = run(m);
    expect(r.status).toBe(0);
    expect(readFileSync(m.log, 'utf8').trim().split('\n')).toEqual(['update', 'install -y --no-install-recommends bubblewrap']);
    expect(existsSync(m.bwrap)).toBe(true);
  });

  it.runIf(isRoot && existsSync('/usr/bin/setpriv'))('stops at once with one line saying what to install when the user may not install packages', () => {
    const m = fakeMachine();
    // PATH has no sudo on purpose: `command -v sudo` must fail even where the machine has one
    const r = run(m, { ...m.env, PATH: `${dir}:${NODE_DIR}:/bin` }, true);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('apt-get install bubblewrap');
    expect(lines[0]).toContain(m.bwrap);
    expect(existsSync(m.log)).toBe(false);
  });

  it.runIf(isRoot)('fails with the apt-get step that failed', () => {
    const m = fakeMachine(100);
    const r = run(m);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/apt-get update failed \(exit 100\)/);
    expect(existsSync(m.bwrap)).toBe(false);
  });
});
