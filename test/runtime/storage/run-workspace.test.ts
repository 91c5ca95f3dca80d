import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunWorkspace, WorkspacePathError, reserveRunFolder } from '../../../src/runtime/storage/run-workspace.js';

let dir: string;
let ws: RunWorkspace;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-ws-'));
  ws = new RunWorkspace(join(dir, 'runs'), 'run_20260101_000000_000001');
  await ws.create();
  writeFileSync(join(ws.inputDir, 'a.csv'), 'id,text\n1,hi\n');
  writeFileSync(join(dir, 'secret.txt'), 'secret');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('RunWorkspace', () => {
  it('creates input/, runtime/, artifacts/ and refuses to reuse a run folder', async () => {
    await expect(ws.create()).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await ws.readText('input/a.csv')).toContain('id,text');
  });

  it('refuses .., absolute paths, NUL bytes and empty paths on read', async () => {
    expect(() => ws.resolveRead('../../secret.txt')).toThrow(WorkspacePathError);
    expect(() => ws.resolveRead(join(dir, 'secret.txt'))).toThrow(/outside the read roots/);
    expect(() => ws.resolveRead('input/a.csv\0.png')).toThrow(/NUL byte/);
    expect(() => ws.resolveRead('')).toThrow(/empty path/);
    await expect(ws.readText('input/../../../secret.txt')).rejects.toThrow(WorkspacePathError);
  });

  it('follows symlinks before deciding', async () => {
    symlinkSync(join(dir, 'secret.txt'), join(ws.inputDir, 'link.txt'));
    await expect(ws.readText('input/link.txt')).rejects.toThrow(/outside the read roots/);
    symlinkSync(dir, join(ws.artifactsDir, 'out'));
    await expect(ws.writeArtifact('out/x.md', 'x')).rejects.toThrow(/outside the write roots/);
  });

  it('writes only under artifacts/', async () => {
    const r = await ws.writeArtifact('sub/report.md', '# hi');
    expect(r).toEqual({ path: 'sub/report.md', bytes: 4 });
    expect(readFileSync(join(ws.artifactsDir, 'sub/report.md'), 'utf8')).toBe('# hi');
    await expect(ws.writeArtifact('artifacts/x.json', '{}')).resolves.toMatchObject({ path: 'x.json' });
    await expect(ws.writeArtifact('../runtime/x.json', '{}')).rejects.toThrow(/outside the write roots/);
    await expect(ws.writeArtifact('/tmp/x', '{}')).rejects.toThrow(/relative to artifacts/);
    expect(() => ws.resolveWrite('input/a.csv')).toThrow(/outside the write roots/);
    expect(await ws.listArtifacts()).toEqual([
      { path: 'sub/report.md', bytes: 4 },
      { path: 'x.json', bytes: 2 },
    ]);
  });

  it('writes runtime JSON by bare name only', async () => {
    await ws.writeRuntimeJson('evidence_index.json', { a: 1 });
    expect(JSON.parse(readFileSync(join(ws.runtimeDir, 'evidence_index.json'), 'utf8'))).toEqual({ a: 1 });
    await expect(ws.writeRuntimeJson('../manifest.json', {})).rejects.toThrow(WorkspacePathError);
  });

  it('widened scopes and extra read roots are honoured', async () => {
    mkdirSync(join(dir, 'shared'));
    writeFileSync(join(dir, 'shared', 'k.md'), 'kb');
    ws.setScopes({ readScopes: ['input'], writeScopes: ['artifacts', 'runtime'], extraReadRoots: [join(dir, 'shared')] });
    expect(await ws.readText(join(dir, 'shared', 'k.md'))).toBe('kb');
    expect(() => ws.resolveRead('artifacts/x')).toThrow(/outside the read roots/);
    expect(ws.resolveWrite('runtime/notes.txt')).toBe(join(ws.runtimeDir, 'notes.txt'));
    expect(() => ws.setScopes({ writeScopes: ['../..'] })).toThrow(/escapes the run folder/);
  });

  it('imports inputs under unique safe names', async () => {
    const src = join(dir, 'my file.csv');
    writeFileSync(src, 'x');
    expect(await ws.importInput(src)).toBe('input/my_file.csv');
    expect(await ws.importInput(src)).toBe('input/my_file_1.csv');
  });

  it('imports only a regular file: a FIFO named as an input is refused at once, and a link planted in input/ is not written through', async () => {
    execFileSync('mkfifo', [join(dir, 'pipe.csv')]);
    await expect(ws.importInput(join(dir, 'pipe.csv'))).rejects.toThrow(/is a FIFO, not a regular file/);
    writeFileSync(join(dir, 'data.csv'), 'a,b\n');
    symlinkSync(join(dir, 'secret.txt'), join(ws.inputDir, 'data.csv'));
    expect(await ws.importInput(join(dir, 'data.csv'))).toBe('input/data_1.csv');
    expect(readFileSync(join(dir, 'secret.txt'), 'utf8')).toBe('secret');
    expect(readFileSync(join(ws.inputDir, 'data_1.csv'), 'utf8')).toBe('a,b\n');
  });
});

// a quiet service makes a run's folders and small files with synchronous calls, a busy one through the
// thread pool: the same folders and files either way
describe.each([
  ['synchronous', true],
  ['thread-pool', false],
])('a run folder made with %s calls', (_mode, sync) => {
  it('skips ids whose folder another process already made, and makes the runs folder on the first run', async () => {
    const runs = join(dir, 'runs2');
    // the first try finds no runs folder: it is made, and the next id is taken
    const first = ['run_20260101_000000_000008', 'run_20260101_000000_000009'];
    expect(await reserveRunFolder(runs, () => first.shift()!, { sync })).toBe('run_20260101_000000_000009');
    mkdirSync(join(runs, 'run_20260101_000000_000001'), { recursive: true });
    const ids = ['run_20260101_000000_000001', 'run_20260101_000000_000002'];
    expect(await reserveRunFolder(runs, () => ids.shift()!, { sync })).toBe('run_20260101_000000_000002');
  });

  it('holds input/, runtime/, artifacts/ and the run files written whole, no temp file left', async () => {
    const runs = join(dir, 'runs3');
    const id = await reserveRunFolder(runs, () => 'run_20260101_000000_000003', { sync });
    const w = new RunWorkspace(runs, id, { syncWrites: () => sync });
    await w.createDirs();
    await w.writeRunJson('input/request.json', { goal: 'phân tích ✓' });
    await w.writeRunJson('runtime/run_status.json', { status: 'queued' });
    await w.writeRunJson('runtime/run_status.json', { status: 'running' });
    expect(readdirSync(join(runs, id)).sort()).toEqual(['artifacts', 'input', 'runtime']);
    expect(JSON.parse(readFileSync(join(runs, id, 'input', 'request.json'), 'utf8'))).toEqual({ goal: 'phân tích ✓' });
    expect(readdirSync(join(runs, id, 'runtime'))).toEqual(['run_status.json']);
    expect(JSON.parse(readFileSync(join(runs, id, 'runtime', 'run_status.json'), 'utf8'))).toEqual({ status: 'running' });
  });

  it('refuses a run file outside the run folder, and a write into a folder that is gone fails', async () => {
    const runs = join(dir, 'runs4');
    const id = await reserveRunFolder(runs, () => 'run_20260101_000000_000004', { sync });
    const w = new RunWorkspace(runs, id, { syncWrites: () => sync });
    await expect(w.writeRunJson('../escape.json', {})).rejects.toThrow(/outside the run folder/);
    await w.createDirs();
    rmSync(join(runs, id, 'runtime'), { recursive: true });
    await expect(w.writeRunJson('runtime/run_status.json', {})).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
