#!/usr/bin/env node
// `npm test` runs this first: the page tests drive Debian's chromium (playwright-core brings no browser).
// Present: nothing to do. Missing: install it with apt-get when this user may install packages (root, or
// password-less sudo); otherwise stop at once with one line saying what to install.
import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';

const browser = process.env.RUNTRAIL_CHROMIUM || '/usr/bin/chromium';
const INSTALL = ['install', '-y', '--no-install-recommends', 'chromium'];

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
  process.stderr.write(`npm test: ${line}\n`);
  process.exit(1);
}

if (executable(browser)) process.exit(0);

const how = `install Debian's chromium (sudo apt-get install chromium) so that ${browser} exists, then run npm test again`;
if (!found('apt-get')) stop(`the page tests need chromium at ${browser} and this machine has no apt-get: ${how}`);
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const viaSudo = !asRoot && found('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
if (!asRoot && !viaSudo) stop(`the page tests need chromium at ${browser}, and this user may not install packages: ${how}`);

process.stderr.write(`npm test: chromium is missing at ${browser}; installing Debian's chromium with apt-get…\n`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const apt = (args) =>
  asRoot ? spawnSync('apt-get', args, { stdio: 'inherit', env }) : spawnSync('sudo', ['-n', 'apt-get', ...args], { stdio: 'inherit', env });
for (const args of [['update'], INSTALL]) {
  const r = apt(args);
  if (r.status !== 0) stop(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal}): ${how}`);
}
if (!executable(browser)) stop(`apt-get installed chromium but ${browser} is still missing: ${how}, or set RUNTRAIL_CHROMIUM to the browser's path`);
