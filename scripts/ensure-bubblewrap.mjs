#!/usr/bin/env node
// `npm test` (and `npm start`) run this first: every process a run starts is sandboxed with Debian's
// bubblewrap, so without it the exec and sandbox tests cannot pass and a server cannot run commands.
// Present: nothing to do. Missing: install it with apt-get when this user may install packages (root,
// or password-less sudo); otherwise stop at once with one line saying what to install. Never by
// turning the sandbox off.
import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';

const bwrap = process.env.RUNTRAIL_BWRAP || '/usr/bin/bwrap';
const INSTALL = ['install', '-y', '--no-install-recommends', 'bubblewrap'];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function found(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function stop(line) {
  process.stderr.write(`${process.env.npm_lifecycle_event ?? 'npm test'}: ${line}\n`);
  process.exit(1);
}

if (executable(bwrap)) process.exit(0);

const how = `install Debian's bubblewrap (sudo apt-get install bubblewrap) so that ${bwrap} exists, then run this again`;
if (!found('apt-get')) stop(`commands of runs are sandboxed with bubblewrap at ${bwrap} and this machine has no apt-get: ${how}`);
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const viaSudo = !asRoot && found('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
if (!asRoot && !viaSudo) stop(`commands of runs are sandboxed with bubblewrap at ${bwrap}, and this user may not install packages: ${how}`);

process.stderr.write(`bubblewrap is missing at ${bwrap}; installing Debian's bubblewrap with apt-get…\n`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const apt = (args) =>
  asRoot ? spawnSync('apt-get', args, { stdio: 'inherit', env }) : spawnSync('sudo', ['-n', 'apt-get', ...args], { stdio: 'inherit', env });
for (const args of [['update'], INSTALL]) {
  const r = apt(args);
  if (r.status !== 0) stop(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal}): ${how}`);
}
if (!executable(bwrap)) stop(`apt-get installed bubblewrap but ${bwrap} is still missing: ${how}, or set RUNTRAIL_BWRAP to its path`);
