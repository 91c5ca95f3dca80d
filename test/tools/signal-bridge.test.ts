/**
 * The bridge's default path, in a real process: Runtrail has no signal handler of its own, gets
 * SIGTERM, ends its children's groups (SIGKILL for those trapping TERM), then dies of SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, liveProcesses, marker } from './helpers.js';

const SRC = resolve(import.meta.dirname, '../../src');
let root: string;
let dir: string;

beforeAll(() => {
  // Plain node cannot load .ts: transpile the supervisor's modules into a scratch ESM tree laid out
  // as src/ is (supervised-child imports the sandbox's socket-owner).
  root = mkdtempSync(join(tmpdir(), 'rt-bridge-'));
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  for (const f of ['tools/signal-bridge', 'tools/process-group', 'tools/supervised-child', 'sandbox/socket-owner']) {
    const out = ts.transpileModule(readFileSync(join(SRC, `${f}.ts`), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    mkdirSync(join(root, f, '..'), { recursive: true });
    writeFileSync(join(root, `${f}.js`), out.outputText);
  }
  dir = join(root, 'tools');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('signal bridge in a process without its own handlers', () => {
  it('ends every child group, then lets the signal end the process', async () => {
    const m = marker();
    writeFileSync(
      join(dir, 'host.js'),
      `import { spawnSupervised } from './supervised-child.js';
       const c = await spawnSupervised({ file: '/bin/sh', args: ['-c', "trap '' TERM; sleep ${m} & sleep ${m}; wait"], cwd: '/tmp', env: { PATH: process.env.PATH }, killGraceMs: 300 }, () => {});
       console.log('ready', c.pid);
       setInterval(() => {}, 1000);`,
    );
    const host = spawn(process.execPath, [join(dir, 'host.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      host.stdout.on('data', (b: Buffer) => (out += b.toString()));
      expect(await eventually(() => out.includes('ready') && liveProcesses(m).length >= 2, 10_000)).toBe(true);
      const exited = new Promise<NodeJS.Signals | null>((r) => host.on('exit', (_code, sig) => r(sig)));
      host.kill('SIGTERM');
      expect(await exited).toBe('SIGTERM');
      expect(liveProcesses(m)).toEqual([]);
    } finally {
      if (host.exitCode === null && host.signalCode === null) host.kill('SIGKILL');
    }
  });
});
