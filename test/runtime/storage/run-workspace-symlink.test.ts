/** A dangling symlink in artifacts/ must not let a write land outside the write roots. */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunWorkspace, WorkspacePathError } from '../../../src/runtime/storage/run-workspace.js';

let dir: string;
let ws: RunWorkspace;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-ws-link-'));
  ws = new RunWorkspace(join(dir, 'runs'), 'run_20260101_000000_000001');
  await ws.create();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('RunWorkspace and dangling symlinks', () => {
  it('refuses a write through a dangling link that points outside, directly or through another link', async () => {
    symlinkSync(join(dir, 'planted.txt'), join(ws.artifactsDir, 'report.md'));
    await expect(ws.writeArtifact('report.md', 'pwned')).rejects.toThrow(WorkspacePathError);
    expect(() => ws.resolveWrite('artifacts/report.md')).toThrow(/outside the write roots/);
    symlinkSync(join(dir, 'nowhere', 'deeper.txt'), join(ws.artifactsDir, 'hop2'));
    symlinkSync(join(ws.artifactsDir, 'hop2'), join(ws.artifactsDir, 'hop1.md'));
    await expect(ws.writeArtifact('hop1.md', 'pwned')).rejects.toThrow(WorkspacePathError);
    expect(existsSync(join(dir, 'planted.txt'))).toBe(false);
  });

  it('refuses a symlink loop, and still writes through a dangling link that stays inside artifacts/', async () => {
    symlinkSync(join(ws.artifactsDir, 'loop_b'), join(ws.artifactsDir, 'loop_a'));
    symlinkSync(join(ws.artifactsDir, 'loop_a'), join(ws.artifactsDir, 'loop_b'));
    await expect(ws.writeArtifact('loop_a', 'x')).rejects.toThrow(WorkspacePathError);
    symlinkSync(join(ws.artifactsDir, 'real.md'), join(ws.artifactsDir, 'alias.md'));
    await ws.writeArtifact('alias.md', 'ok');
    expect(readFileSync(join(ws.artifactsDir, 'real.md'), 'utf8')).toBe('ok');
  });
});
