/** A WorkspaceAccess over a temp dir, confined like the real one (input/, artifacts/, runtime/ readable; artifacts/ writable). */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { WorkspaceAccess } from '../../../src/runtime/agent.js';
import { readRegularFile } from '../../../src/tools/confined-files.js';

export interface TempWorkspace extends WorkspaceAccess {
  /** put a file into input/ and return its workspace-relative path */
  addInput(name: string, content: string | Uint8Array): string;
  dispose(): void;
}

export function createTempWorkspace(runId = 'run_test'): TempWorkspace {
  const root = mkdtempSync(join(tmpdir(), 'runtrail-plugins-'));
  for (const d of ['input', 'runtime', 'artifacts']) mkdirSync(join(root, d));
  const inside = (p: string, dirs: string[]): string => {
    if (p.includes('\0')) throw new Error(`path ${JSON.stringify(p)} refused: NUL byte`);
    const abs = resolve(root, p);
    if (!dirs.some((d) => abs.startsWith(join(root, d) + sep))) throw new Error(`path ${JSON.stringify(p)} refused: outside ${dirs.join(', ')}`);
    return abs;
  };
  const ws: TempWorkspace = {
    runId,
    root,
    resolveRead: (p) => inside(p, ['input', 'artifacts', 'runtime']),
    resolveWrite: (p) => inside(p, ['artifacts']),
    readText: (p) => readFile(ws.resolveRead(p), 'utf8'),
    readFile: (p, bounds) => readRegularFile({ root, rel: relative(root, ws.resolveRead(p)) }, bounds),
    async writeArtifact(rel, content) {
      const target = ws.resolveWrite(join('artifacts', rel.replace(/^artifacts\//, '')));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
      return { path: relative(join(root, 'artifacts'), target), bytes: typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength };
    },
    async writeRuntimeJson(name, value) {
      await writeFile(join(root, 'runtime', name), JSON.stringify(value, null, 2));
    },
    async listArtifacts() {
      const out: Array<{ path: string; bytes: number }> = [];
      for (const f of await readdir(join(root, 'artifacts'))) out.push({ path: f, bytes: (await stat(join(root, 'artifacts', f))).size });
      return out.sort((a, b) => a.path.localeCompare(b.path));
    },
    addInput(name, content) {
      writeFileSync(join(root, 'input', name), content);
      return `input/${name}`;
    },
    dispose() {
      rmSync(root, { recursive: true, force: true });
    },
  };
  return ws;
}
