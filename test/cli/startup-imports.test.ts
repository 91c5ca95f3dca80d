/**
 * What a CLI start loads: a run of an agent without MCP servers never loads the MCP SDK (its client,
 * transports and schemas were ~100 ms of every start), the SDK comes with the first connection; a
 * project without code plugins never loads their TypeScript loader (jiti, ~40 ms).
 * Runs the built binary (`npm test` builds first) with a loader hook that records every module URL.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { SMALL_FEEDBACK_CSV } from '../fixtures/small-feedback-csv.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Module URLs loaded by `runtrail <args>` in a fresh project folder. */
function loadedBy(args: string[]): string[] {
  const hook = join(dir, 'hook.mjs');
  const log = join(dir, 'loaded.txt');
  writeFileSync(
    hook,
    `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }\n`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) env[k] = v;
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, MAIN, ...args], {
    cwd: dir,
    env: { ...env, HOME: dir },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

describe.skipIf(!existsSync(MAIN))('CLI start-up', () => {
  it('a run without MCP servers or code plugins loads neither the MCP SDK nor jiti', () => {
    dir = mkdtempSync(join(tmpdir(), 'rt-startup-'));
    writeFileSync(join(dir, 'feedback.csv'), SMALL_FEEDBACK_CSV);
    const loaded = loadedBy(['run', 'feedbacklens', '--input', 'csv_path=feedback.csv', '--data-dir', join(dir, 'data')]);
    // the hook sees the run's own modules, so an empty list would not pass for a quiet one
    expect(loaded.some((u) => u.includes('/feedbacklens/'))).toBe(true);
    expect(loaded.filter((u) => u.includes('@modelcontextprotocol/sdk'))).toEqual([]);
    expect(loaded.filter((u) => u.includes('/node_modules/jiti/'))).toEqual([]);
    // the chat channels' SDKs come with a channel's start
    expect(loaded.filter((u) => /\/node_modules\/(grammy|@grammyjs|@slack|@larksuiteoapi)\//.test(u))).toEqual([]);
  });

  it('a project with MCP servers configured loads the MCP client at start, so its first connection does not wait for it', () => {
    dir = mkdtempSync(join(tmpdir(), 'rt-startup-'));
    mkdirSync(join(dir, '.runtrail'));
    writeFileSync(join(dir, '.runtrail', 'mcp.json'), JSON.stringify({ mcpServers: { docs: { command: 'never-started-here' } } }));
    const loaded = loadedBy(['agents', '--json', '--data-dir', join(dir, 'data')]);
    expect(loaded.some((u) => u.includes('@modelcontextprotocol/sdk/dist/esm/client/index.js'))).toBe(true);
  });
});
