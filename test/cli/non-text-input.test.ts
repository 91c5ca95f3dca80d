/**
 * A file that is not text given as the feedback CSV (an image, random bytes) is refused before any
 * run exists, in plain words naming the file: CLI exit 2, HTTP 400, uploaded or not. Its bytes are
 * never printed.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { postJson } from '../server/helpers.js';
import { Sink } from './sink.js';

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
/** Bytes no encoding reads as text; the printable ones would show up if echoed. */
const BINARY = Uint8Array.from({ length: 2048 }, (_, i) => (i % 16 === 0 ? 0 : 0x41 + (i % 16)));

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'non-text-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function runFolders(): string[] {
  const runs = join(dir, 'data', 'runs');
  return existsSync(runs) ? readdirSync(runs) : [];
}

function cli(args: string[]) {
  const stdout = new Sink();
  const stderr = new Sink();
  const deps: CliDeps = {
    agents: [{ ...createFeedbackLensPlugin(), defaultSkill: null }],
    stdout,
    stderr,
    env: { HOME: dir, PATH: '/usr/bin:/bin' },
    cwd: dir,
  };
  return runCli([...args, '--data-dir', join(dir, 'data')], deps).then((code) => ({ code, out: stdout.text, err: stderr.text }));
}

describe('a non-text file as the feedback CSV', () => {
  for (const [name, bytes, what] of [
    ['screenshot.png', PNG, 'a PNG image'],
    ['export.csv', BINARY, 'a binary file'],
  ] as const) {
    it(`CLI: ${name} is refused with exit 2, naming the file and what it is, no bytes echoed, no run`, async () => {
      writeFileSync(join(dir, name), bytes);
      const r = await cli(['run', 'feedbacklens', '--input', `csv_path=${name}`]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`input.csv_path: ${name}: this is not text but ${what}`);
      expect(r.err.match(/this is not text/g)).toHaveLength(1);
      expect(r.out + r.err).not.toMatch(/IHDR|BCDEF|\uFFFD/);
      expect(r.out + r.err).not.toContain(String.fromCharCode(0));
      expect(runFolders()).toEqual([]);
    });
  }

  let server: RunningServer | null = null;
  let service: RunService | null = null;
  afterEach(async () => {
    await server?.close();
    await service?.close();
    server = null;
    service = null;
  });

  it('API: an uploaded PNG given as csv_path is a 400 naming it, and no run is made', async () => {
    const dataDir = join(dir, 'data');
    service = new RunService({ dataDir, agents: [{ ...createFeedbackLensPlugin(), defaultSkill: null }], env: {} });
    server = await startServer({ service, port: 0, dataDir, env: {} });
    const fd = new FormData();
    fd.append('file', new Blob([PNG]), 'chart.png');
    const up = (await (await fetch(`${server.url}/api/uploads`, { method: 'POST', body: fd })).json()) as { path: string };
    const created = await postJson(`${server.url}/api/runs`, { plugin: 'feedbacklens', input: { csv_path: up.path } });
    expect(created.status).toBe(400);
    const body = JSON.stringify(created.body);
    expect(body).toContain(`${up.path}: this is not text but a PNG image`);
    expect(body).not.toMatch(/IHDR|\\u0000/);
    expect(runFolders()).toEqual([]);
  });
});
