#!/usr/bin/env node
// `npm test` runs this before the page tests: they check that Chinese, Japanese and Korean text renders with a real
// font (the page's font stack names the common ones), so the machine needs one. Present (fontconfig knows a font
// for Chinese): nothing to do. Missing: install Debian's fonts-wqy-microhei (1.6 MB; fonts-noto-cjk works too and
// is 56 MB) with apt-get when this user may install packages (root, or password-less sudo); otherwise stop at once
// with one line saying what to install.
import { spawnSync } from 'node:child_process';

const PKG = 'fonts-wqy-microhei';

function cjkFont() {
  const r = spawnSync('fc-list', [':lang=zh', 'family'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '';
}

function found(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function stop(line) {
  process.stderr.write(`npm test: ${line}\n`);
  process.exit(1);
}

if (cjkFont()) process.exit(0);

const how = `install a font with CJK glyphs (sudo apt-get install ${PKG}, or fonts-noto-cjk), then run npm test again`;
if (!found('apt-get')) stop(`the page tests need a font for Chinese text and this machine has no apt-get: ${how}`);
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const viaSudo = !asRoot && found('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
if (!asRoot && !viaSudo) stop(`the page tests need a font for Chinese text, and this user may not install packages: ${how}`);

process.stderr.write(`npm test: no font for Chinese text; installing Debian's ${PKG} with apt-get…\n`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const apt = (args) =>
  asRoot ? spawnSync('apt-get', args, { stdio: 'inherit', env }) : spawnSync('sudo', ['-n', 'apt-get', ...args], { stdio: 'inherit', env });
for (const args of [['update'], ['install', '-y', '--no-install-recommends', PKG]]) {
  const r = apt(args);
  if (r.status !== 0) stop(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal}): ${how}`);
}
if (!cjkFont()) stop(`apt-get installed ${PKG} but fontconfig still lists no font for Chinese (fc-list :lang=zh): ${how}`);
