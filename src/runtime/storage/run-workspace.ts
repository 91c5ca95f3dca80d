/**
 * The per-run folder: input/, runtime/, artifacts/. Every path a tool names is refused outside the
 * allowed roots; files are opened beneath the run folder by descriptor (confined-files.ts), so what the
 * run's own commands swap in meanwhile cannot redirect a read or a write.
 */
import { closeSync, constants as fsc, createReadStream, createWriteStream, fstatSync, mkdirSync, openSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { maskSecrets } from '../../events/secret-masker.js';
import { isInside, realpathLoose, WorkspacePathError } from '../../tools/confine-path.js';
import {
  type ConfinedPath,
  createFileBeneath,
  DEFAULT_READ_BOUNDS,
  kindOf,
  type ReadBounds,
  readRegularFile,
  replaceFileBeneath,
} from '../../tools/confined-files.js';
import { RUN_DIRS, RunFolder } from './run-folder.js';
import type { WorkspaceAccess } from '../agent.js';

export { WorkspacePathError };

export interface RunWorkspaceOptions {
  /** Extra absolute read roots granted by the capabilities (besides the run's own scopes). */
  extraReadRoots?: string[];
  /** Read scopes relative to the run folder; default input, artifacts, runtime. */
  readScopes?: string[];
  /** Write scopes relative to the run folder; default artifacts only. */
  writeScopes?: string[];
  /**
   * Whether the run's own folders and small files are made with synchronous calls now (see
   * replaceFile): the service says yes while it admits a run alone. Default: never.
   */
  syncWrites?: () => boolean;
}

export const WORKSPACE_DIRS = RUN_DIRS;

export class RunWorkspace implements WorkspaceAccess {
  readonly runId: string;
  readonly root: string;
  private readRoots: string[];
  private writeRoots: string[];
  /** The runtime's own files of this run. */
  readonly folder: RunFolder;

  constructor(runsDir: string, runId: string, opts: RunWorkspaceOptions = {}) {
    this.runId = runId;
    this.root = resolve(runsDir, runId);
    this.readRoots = [];
    this.writeRoots = [];
    this.folder = new RunFolder(runsDir, runId, { syncWrites: opts.syncWrites, writeJson: (relPath, value) => this.writeRunJson(relPath, value) });
    this.setScopes(opts);
  }

  /** Re-point the roots once the capability snapshot is resolved. */
  setScopes(opts: RunWorkspaceOptions): void {
    const reads = opts.readScopes ?? ['input', 'artifacts', 'runtime'];
    const writes = opts.writeScopes ?? ['artifacts'];
    this.readRoots = [...reads.map((s) => this.scopeDir(s)), ...(opts.extraReadRoots ?? []).map((r) => resolve(r))];
    this.writeRoots = writes.map((s) => this.scopeDir(s));
  }

  get allowedReadRoots(): readonly string[] {
    return this.readRoots;
  }

  get allowedWriteRoots(): readonly string[] {
    return this.writeRoots;
  }

  private scopeDir(scope: string): string {
    const dir = resolve(this.root, scope);
    if (!isInside(dir, this.root)) throw new WorkspacePathError(scope, 'scope escapes the run folder');
    return dir;
  }

  get inputDir(): string {
    return join(this.root, 'input');
  }
  get runtimeDir(): string {
    return join(this.root, 'runtime');
  }
  get artifactsDir(): string {
    return join(this.root, 'artifacts');
  }

  /** Creates the run folder; fails if it already exists (a run id is used once). */
  async create(): Promise<void> {
    await mkdir(dirname(this.root), { recursive: true });
    await mkdir(this.root); // no `recursive`: EEXIST tells a caller the id is taken
    await this.createDirs();
  }

  /** input/, runtime/, artifacts/ inside a folder that exists (e.g. one made by reserveRunFolder). */
  createDirs(): Promise<void> {
    return this.folder.createDirs();
  }

  private confine(p: string, roots: readonly string[], what: string): string {
    if (typeof p !== 'string' || p.length === 0) throw new WorkspacePathError(String(p), 'empty path');
    if (p.includes('\0')) throw new WorkspacePathError(p, 'contains a NUL byte');
    const real = realpathLoose(resolve(this.root, p));
    // roots are resolved too, so a data dir behind a symlink (e.g. /tmp on macOS) still matches
    if (!roots.some((r) => isInside(real, realpathLoose(r)))) {
      throw new WorkspacePathError(p, `outside the ${what} roots (${roots.map((r) => this.show(r)).join(', ')})`);
    }
    return real;
  }

  private show(abs: string): string {
    return isInside(abs, this.root) ? relative(this.root, abs) || '.' : abs;
  }

  /** Relative paths are relative to the run folder (e.g. `input/feedback.csv`); symlinks are followed before the check. */
  resolveRead(p: string): string {
    return this.confine(p, this.readRoots, 'read');
  }

  resolveWrite(p: string): string {
    return this.confine(p, this.writeRoots, 'write');
  }

  /**
   * Where `p` is opened: below the run folder, or below the granted read root that holds it, with the
   * resolved path (links followed by hand) checked against the roots.
   */
  private confined(p: string, roots: readonly string[], what: string): ConfinedPath {
    if (typeof p !== 'string' || p.length === 0) throw new WorkspacePathError(String(p), 'empty path');
    if (p.includes('\0')) throw new WorkspacePathError(p, 'contains a NUL byte');
    const abs = resolve(this.root, p);
    const base = isInside(abs, this.root) ? this.root : roots.find((r) => isInside(abs, r));
    const refusal = `outside the ${what} roots (${roots.map((r) => this.show(r)).join(', ')})`;
    if (base === undefined) throw new WorkspacePathError(p, refusal);
    return {
      root: base,
      rel: relative(base, abs) || '.',
      what: refusal.replace(/^outside /, ''),
      allow: (names) => (roots.some((r) => isInside(join(base, ...names), r)) ? null : refusal),
    };
  }

  /** The first bytes of a regular file the run may read (input/…, artifacts/…, a granted root), and its size. */
  readFile(p: string, bounds: ReadBounds = DEFAULT_READ_BOUNDS): Promise<{ data: Buffer; size: number }> {
    return readRegularFile(this.confined(p, this.readRoots, 'read'), bounds);
  }

  async readText(p: string): Promise<string> {
    const { data, size } = await this.readFile(p);
    if (size > data.length) throw new WorkspacePathError(p, `is larger than ${DEFAULT_READ_BOUNDS.maxBytes} bytes (${size})`);
    return data.toString('utf8');
  }

  /** `relPath` is relative to artifacts/ (a leading `artifacts/` is accepted too). Text has the server's
   *  secrets masked (bytes are written as given: an image is not text to mask). */
  async writeArtifact(relPath: string, text: string | Uint8Array): Promise<{ path: string; bytes: number }> {
    const content = typeof text === 'string' ? Buffer.from(maskSecrets(text)) : text;
    const names = await replaceFileBeneath(this.confined(this.artifactRel(relPath), this.writeRoots, 'write'), content);
    return {
      path: relative(this.artifactsDir, join(this.root, ...names))
        .split(sep)
        .join('/'),
      bytes: content.byteLength,
    };
  }

  /** artifacts/<relPath>, relative to the run folder. */
  private artifactRel(relPath: string): string {
    if (typeof relPath !== 'string' || relPath.length === 0) throw new WorkspacePathError(String(relPath), 'empty path');
    if (isAbsolute(relPath)) throw new WorkspacePathError(relPath, 'artifact paths are relative to artifacts/');
    return join('artifacts', relPath.replace(/^artifacts[\\/]/, ''));
  }

  /** The file artifacts/<relPath> names, confined to the write roots. */
  private artifactTarget(relPath: string): string {
    return this.resolveWrite(this.artifactRel(relPath));
  }

  /** What writeArtifact(relPath, text) would leave on the disk (its secrets masked as it masks them):
   *  the path under artifacts/, its size and SHA-256. Nothing is written. */
  artifactDigest(relPath: string, text: string | Uint8Array): { path: string; bytes: number; sha256: string } {
    const content = Buffer.from(typeof text === 'string' ? maskSecrets(text) : text);
    const target = this.artifactTarget(relPath);
    return { path: relative(this.artifactsDir, target).split(sep).join('/'), bytes: content.byteLength, sha256: sha256(content) };
  }

  /** The size and SHA-256 of artifacts/<path> as it is on the disk, or null when it cannot be read. */
  async artifactOnDisk(path: string): Promise<{ bytes: number; sha256: string } | null> {
    try {
      const { data, size } = await readRegularFile(this.confined(this.artifactRel(path), this.writeRoots, 'write'), ARTIFACT_HASH_BOUNDS);
      return size === data.length ? { bytes: size, sha256: sha256(data) } : null;
    } catch {
      return null;
    }
  }

  /** Write a file the runtime (not a tool) owns anywhere in the run folder; atomic via rename. The
   *  server's secrets are masked in it (request.json, system_prompt.md, run_status.json, …). */
  writeRunFile(relPath: string, text: string): Promise<void> {
    return this.folder.writeText(relPath, text);
  }

  async writeRunJson(relPath: string, value: unknown): Promise<void> {
    await this.writeRunFile(relPath, `${JSON.stringify(value, null, 2)}\n`);
  }

  /** `name` is a bare file name inside runtime/ (e.g. evidence_index.json). */
  async writeRuntimeJson(name: string, value: unknown): Promise<void> {
    if (typeof name !== 'string' || !/^[A-Za-z0-9._-]+$/.test(name) || name === '.' || name === '..') {
      throw new WorkspacePathError(String(name), 'runtime files are bare names like evidence_index.json');
    }
    await this.writeRunJson(join('runtime', name), value);
  }

  listArtifacts(): Promise<Array<{ path: string; bytes: number }>> {
    return this.folder.listArtifacts();
  }

  /**
   * Copies an outside file (an upload, a file the CLI was given) into input/ under a safe unique name;
   * returns the workspace-relative path. Only a regular file is copied: a FIFO or device named as an
   * input is refused, not waited on. The copy is its owner's alone, made new beneath the run folder.
   */
  async importInput(source: string, preferredName?: string): Promise<string> {
    const name = (preferredName ?? basename(source)).replace(/[^A-Za-z0-9._-]/g, '_') || 'input';
    const from = openSync(source, fsc.O_RDONLY | fsc.O_NONBLOCK | fsc.O_NOCTTY);
    try {
      const st = fstatSync(from);
      if (!st.isFile()) throw new WorkspacePathError(source, `is ${kindOf(st)}, not a regular file`, 'not_a_file');
      let candidate = name;
      for (let i = 1; ; i++) {
        let to: number;
        try {
          to = createFileBeneath({ root: this.root, rel: `input/${candidate}`, what: 'the run folder' });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
          const dot = name.lastIndexOf('.');
          candidate = dot > 0 ? `${name.slice(0, dot)}_${i}${name.slice(dot)}` : `${name}_${i}`;
          continue;
        }
        await pipeline(createReadStream('', { fd: from, autoClose: false, start: 0 }), createWriteStream('', { fd: to }));
        return `input/${candidate}`;
      }
    } finally {
      closeSync(from);
    }
  }
}

/**
 * Takes the next free run id by creating its folder: ids are unique within a process, and the
 * exclusive mkdir makes them unique across processes sharing one data dir.
 */
export async function reserveRunFolder(runsDir: string, nextId: () => string, opts: { sync?: boolean } = {}): Promise<string> {
  // sync: see RunWorkspaceOptions.syncWrites
  const make = async (dir: string, recursive: boolean): Promise<void> => {
    if (opts.sync) mkdirSync(dir, { recursive });
    else await mkdir(dir, { recursive });
  };
  for (let attempt = 0; ; attempt++) {
    const id = nextId();
    try {
      await make(join(runsDir, id), false);
      return id;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // the runs folder itself is made on the first run (one mkdir per create fewer afterwards)
      if (code === 'ENOENT' && attempt < 100) await make(runsDir, true);
      else if (code !== 'EEXIST' || attempt >= 100) throw e;
    }
  }
}

/** A file write_artifact wrote is at most 10 MB: one larger is not hashed (it is not what the call left). */
const ARTIFACT_HASH_BOUNDS: ReadBounds = { maxBytes: 64 * 1024 * 1024, timeoutMs: 10_000 };

function sha256(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}
