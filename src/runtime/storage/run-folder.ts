/**
 * A run's folder on disk, `<dataDir>/runs/<run_id>/`: reads and writes the runtime's own files (the
 * request, the status, the manifest, the metrics, …) by the names of run-files.ts. Everything else asks
 * a RunFolder for a file's path or its typed content, so a file is renamed there or nowhere.
 *
 * Writes are atomic (a temp file renamed over the target) and have the server's secrets masked; reads
 * answer null for a file that is absent or not valid JSON (a run that never got that far).
 */
import { mkdirSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { maskSecrets } from '../../events/secret-masker.js';
import { isInside, WorkspacePathError } from '../../tools/confine-path.js';
import type { ReasoningEffort } from '../../providers/model-provider.js';
import type { ResolvedCapture } from '../model-calls/capture-settings.js';
import { listFilesBeneath } from '../../tools/confined-files.js';
import { replaceFile } from './replace-file.js';
import { RUN_DIRS, RUN_FILES, type RunFile } from './run-files.js';
import type { RunManifest } from './run-manifest.js';
import type { RunMetricsFile } from '../metrics/run-metrics.js';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy.js';
import type { RunLimits, RunStatusFile } from '../run-service-types.js';

export { RUN_DIRS, RUN_FILES, type RunFile } from './run-files.js';

/** input/request.json: the request as sent, and what the runtime resolved from it. */
export interface RequestFile {
  run_id: string;
  plugin: string;
  goal: string;
  input: Record<string, unknown>;
  input_sources: Record<string, string>;
  model: unknown;
  limits: Partial<RunLimits>;
  reasoning: ReasoningEffort;
  skill: string | null;
  conversation_id: string;
  tenant_id: string | null;
  trace: { trace_id: string; parent_span_id: string | null };
  created_at: string;
  skill_active?: string | null;
  resolved?: { model_spec: unknown; model_cwd: string; limits: RunLimits; claw: string; capture?: ResolvedCapture; sandbox?: SandboxPolicy };
}

/** runtime/owner.json */
export interface OwnerFile {
  pid: number;
  host: string;
}

export interface RunFolderOptions {
  /**
   * Whether the folders and the runtime's files are written with synchronous calls now (see
   * replaceFile); default never.
   */
  syncWrites?: () => boolean;
  /**
   * How a JSON file is written, given its path relative to the folder: a run's workspace writes its
   * folder's files through its own writeRunJson (one seam for every runtime write of a live run).
   * Default: writeText.
   */
  writeJson?: (relPath: string, value: unknown) => Promise<void>;
}

// unique temp names: two writers of one file in one process must not share a temp file
let tmpCounter = 0;

export class RunFolder {
  readonly root: string;
  readonly runId: string;
  /** Folders made by createDirs: writes into them skip their mkdir. */
  private readonly madeDirs = new Set<string>();
  private readonly syncWrites: () => boolean;
  private readonly jsonWriter: (relPath: string, value: unknown) => Promise<void>;

  constructor(runsDir: string, runId: string, opts: RunFolderOptions = {}) {
    this.runId = runId;
    this.root = resolve(runsDir, runId);
    this.syncWrites = opts.syncWrites ?? (() => false);
    this.jsonWriter = opts.writeJson ?? ((relPath, value) => this.writeText(relPath, `${JSON.stringify(value, null, 2)}\n`));
  }

  /** The folder at `root` (a run folder's absolute path). */
  static at(root: string): RunFolder {
    return new RunFolder(dirname(root), basename(root));
  }

  /** The absolute path of one of the run's files. */
  path(file: RunFile): string {
    return join(this.root, RUN_FILES[file]);
  }

  /** input/, runtime/, artifacts/ inside the run folder, which exists. */
  async createDirs(): Promise<void> {
    // synchronous when allowed: three mkdirs take ~0.4 ms where three thread-pool round trips took ~0.85
    if (this.syncWrites()) for (const d of RUN_DIRS) mkdirSync(join(this.root, d), { recursive: true });
    else await Promise.all(RUN_DIRS.map((d) => mkdir(join(this.root, d), { recursive: true })));
    // the run folder too: manifest.json is written into it
    for (const d of ['', ...RUN_DIRS]) this.madeDirs.add(join(this.root, d));
  }

  /** Every regular file under artifacts/, with its size, by path (posix, relative to artifacts/); opened beneath the folder by descriptor. */
  listArtifacts(): Promise<Array<{ path: string; bytes: number }>> {
    return listFilesBeneath({ root: this.root, rel: 'artifacts', what: 'the run folder' });
  }

  /** Writes `text` to `relPath` (relative to the folder, and inside it), atomically, secrets masked. */
  async writeText(relPath: string, text: string): Promise<void> {
    const target = resolve(this.root, relPath);
    if (!isInside(target, this.root)) throw new WorkspacePathError(relPath, 'outside the run folder');
    const dir = dirname(target);
    // the folders createDirs made need no mkdir per write (a file write is then two file-system calls fewer)
    if (!this.madeDirs.has(dir)) await mkdir(dir, { recursive: true });
    await replaceFile(`${target}.tmp-${process.pid}-${++tmpCounter}`, target, maskSecrets(text), { sync: this.syncWrites() });
  }

  /** Pretty JSON, ending in a newline. */
  writeJson(file: RunFile, value: unknown): Promise<void> {
    return this.jsonWriter(RUN_FILES[file], value);
  }

  /** A JSON file of the run; null when it is absent or unreadable. */
  async readJson<T = unknown>(file: RunFile): Promise<T | null> {
    try {
      return JSON.parse(await readFile(this.path(file), 'utf8')) as T;
    } catch {
      return null;
    }
  }

  readStatus(): Promise<RunStatusFile | null> {
    return this.readJson<RunStatusFile>('status');
  }
  writeStatus(status: RunStatusFile): Promise<void> {
    return this.writeJson('status', status);
  }

  readManifest(): Promise<RunManifest | null> {
    return this.readJson<RunManifest>('manifest');
  }
  writeManifest(manifest: RunManifest): Promise<void> {
    return this.writeJson('manifest', manifest);
  }

  readMetrics(): Promise<RunMetricsFile | null> {
    return this.readJson<RunMetricsFile>('metrics');
  }
  writeMetrics(metrics: RunMetricsFile): Promise<void> {
    return this.writeJson('metrics', metrics);
  }

  readRequest(): Promise<RequestFile | null> {
    return this.readJson<RequestFile>('request');
  }
  writeRequest(request: RequestFile): Promise<void> {
    return this.writeJson('request', request);
  }

  readOwner(): Promise<Partial<OwnerFile> | null> {
    return this.readJson<Partial<OwnerFile>>('owner');
  }
  /** Marks the run as this process's, so another process's start does not take it for a crash. */
  writeOwner(): Promise<void> {
    return this.writeJson('owner', { pid: process.pid, host: hostname() } satisfies OwnerFile);
  }
}
