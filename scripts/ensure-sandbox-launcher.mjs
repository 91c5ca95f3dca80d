#!/usr/bin/env node
// `npm test` (and `npm start`) run this after ensure-bubblewrap: every sandbox starts through the
// native launcher (native/sandbox-launch.c), which builds its system-call filter with Debian's
// libseccomp and, on a server running as root, becomes the unprivileged `runtrail-sandbox` user.
// This builds the launcher when it is missing or older than its sources (installing gcc and
// libseccomp-dev with apt-get when this user may install packages) and, as root, creates that user.
// Idempotent: nothing to do is a no-op. When something cannot be done, one line says what to do.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sources = ['sandbox-launch.c', 'seccomp-filter.c', 'seccomp-filter.h'].map((f) => join(root, 'native', f));
const out = join(root, 'native', 'build', 'runtrail-sandbox-launch');
const user = process.env.RUNTRAIL_SANDBOX_USER?.trim() || 'runtrail-sandbox';
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function stop(line) {
  process.stderr.write(`${process.env.npm_lifecycle_event ?? 'npm test'}: ${line}\n`);
  process.exit(1);
}

function found(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function aptInstall(packages, why) {
  const viaSudo = !asRoot && found('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  const how = `install Debian's ${packages.join(' ')} (sudo apt-get install ${packages.join(' ')}), then run this again`;
  if (!found('apt-get')) stop(`${why}, and this machine has no apt-get: ${how}`);
  if (!asRoot && !viaSudo) stop(`${why}, and this user may not install packages: ${how}`);
  process.stderr.write(`${why}; installing ${packages.join(' ')} with apt-get…\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) =>
    asRoot ? spawnSync('apt-get', args, { stdio: 'inherit', env }) : spawnSync('sudo', ['-n', 'apt-get', ...args], { stdio: 'inherit', env });
  let r = apt(['install', '-y', '--no-install-recommends', ...packages]);
  if (r.status !== 0) {
    apt(['update']);
    r = apt(['install', '-y', '--no-install-recommends', ...packages]);
  }
  if (r.status !== 0) stop(`apt-get install ${packages.join(' ')} failed (exit ${r.status ?? r.signal}): ${how}`);
}

function userExists(name) {
  return spawnSync('id', ['-u', name], { stdio: 'ignore' }).status === 0;
}

// the sandbox user: only a root server switches to it (an ordinary user's runs are that user)
if (asRoot && !userExists(user)) {
  const r = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', user], {
    stdio: 'inherit',
  });
  if (r.status !== 0 || !userExists(user))
    stop(`could not create the sandbox user ${user} (useradd exit ${r.status}): create an unprivileged system user named ${user}`);
  process.stderr.write(`created the unprivileged user ${user}: sandboxed commands of a root server run as it\n`);
}

if (process.env.RUNTRAIL_SANDBOX_LAUNCHER) process.exit(0);
const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs));
if (existsSync(out) && statSync(out).mtimeMs >= newest) process.exit(0);

const why = 'the sandbox launcher is built against libseccomp (its system-call filter)';
if (!existsSync('/usr/include/seccomp.h')) aptInstall(['libseccomp-dev'], `${why} and its headers are missing`);
if (!found('cc')) aptInstall(['gcc', 'libc6-dev'], `${why} and there is no C compiler`);
mkdirSync(dirname(out), { recursive: true });
const tmp = `${out}.${process.pid}`;
const cc = spawnSync('cc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', tmp, ...sources.filter((f) => f.endsWith('.c')), '-lseccomp'], { stdio: 'inherit' });
if (cc.status !== 0) {
  rmSync(tmp, { force: true });
  stop(`building ${out} failed (cc exit ${cc.status ?? cc.signal}): see the compiler's message above`);
}
renameSync(tmp, out);
process.stderr.write(`built ${out}\n`);
