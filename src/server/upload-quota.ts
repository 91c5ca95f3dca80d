/**
 * What one client may keep in `<dataDir>/uploads`: each client address has its own folder there, with
 * at most `maxFilesPerClient` files and `maxBytesPerClient` bytes (uploads on their way included), and
 * every upload older than `maxAgeMs` is removed (a run copies its file inputs into its own folder when
 * it is created, so an old upload is nobody's input any more). Without it one client fills the disk.
 */
import { mkdir, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface UploadLimits {
  /** One file at most (50 MiB). */
  maxFileBytes: number;
  /** Files one client address keeps at once (100). */
  maxFilesPerClient: number;
  /** Bytes one client address keeps at once (500 MiB). */
  maxBytesPerClient: number;
  /** Uploads older than this are removed (24 h). */
  maxAgeMs: number;
}

export const UPLOAD_LIMIT_DEFAULTS: UploadLimits = {
  maxFileBytes: 50 * 1024 * 1024,
  maxFilesPerClient: 100,
  maxBytesPerClient: 500 * 1024 * 1024,
  maxAgeMs: 24 * 60 * 60 * 1000,
};

/** The settings as `config.json` names them (`"uploads": { … }`). */
export interface UploadLimitsConfig {
  max_file_bytes?: number;
  max_files_per_client?: number;
  max_bytes_per_client?: number;
  max_age_s?: number;
}

export function uploadLimitsFromConfig(c: UploadLimitsConfig | undefined): Partial<UploadLimits> {
  if (!c) return {};
  const out: Partial<UploadLimits> = {};
  if (c.max_file_bytes !== undefined) out.maxFileBytes = c.max_file_bytes;
  if (c.max_files_per_client !== undefined) out.maxFilesPerClient = c.max_files_per_client;
  if (c.max_bytes_per_client !== undefined) out.maxBytesPerClient = c.max_bytes_per_client;
  if (c.max_age_s !== undefined) out.maxAgeMs = Math.round(c.max_age_s * 1000);
  return out;
}

/** The setting that raises a limit, as the operator writes it: a refusal says what to change. */
function raisedBy(setting: keyof UploadLimitsConfig): string {
  return `; the server's config.json "uploads": { "${setting}" } raises it`;
}

/** Why an upload is refused: the limit it met, in the client's words. */
export interface UploadRefusal {
  status: 413 | 429;
  code: 'upload_quota' | 'file_too_large';
  message: string;
}

interface Usage {
  files: number;
  bytes: number;
}

/** A client address as a folder name (an IPv6 address's colons become underscores). */
export function clientFolder(client: string): string {
  return client.replace(/[^A-Za-z0-9.-]/g, '_') || 'unknown';
}

const SWEEP_EVERY_MS = 60_000;

export class UploadQuota {
  /** Uploads on their way, by client: counted before they are files. */
  private readonly inflight = new Map<string, Usage>();
  private lastSweep = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly uploadDir: string,
    readonly limits: UploadLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Removes expired uploads now and then every hour (or every maxAge, if shorter) while the server runs. */
  start(): void {
    void this.sweep().catch(() => undefined);
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), Math.min(this.limits.maxAgeMs, 3_600_000));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Removes every upload older than maxAge (in every client's folder, and loose files of older layouts). */
  async sweep(): Promise<number> {
    this.lastSweep = this.now();
    const cutoff = this.now() - this.limits.maxAgeMs;
    let removed = 0;
    const visit = async (dir: string, depth: number): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const full = join(dir, e.name);
        if (e.isDirectory() && depth === 0) {
          await visit(full, 1);
          // an emptied client folder goes too (fails harmlessly while an upload is being written into it)
          await rmdir(full).catch(() => undefined);
        } else if (e.isFile()) {
          const st = await stat(full).catch(() => null);
          if (st && st.mtimeMs < cutoff) {
            await rm(full, { force: true });
            removed++;
          }
        }
      }
    };
    await visit(this.uploadDir, 0);
    return removed;
  }

  private async usage(client: string): Promise<Usage> {
    const dir = join(this.uploadDir, clientFolder(client));
    const out: Usage = { files: 0, bytes: 0 };
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return out;
    }
    for (const n of names) {
      const st = await stat(join(dir, n)).catch(() => null);
      if (!st?.isFile()) continue;
      out.files++;
      out.bytes += st.size;
    }
    return out;
  }

  /**
   * Admits one upload of `client`: its folder (made), and how many bytes this file may still have —
   * or why it is refused. `done()` must be called when the upload has ended, written or not.
   */
  async admit(client: string): Promise<{ ok: true; dir: string; maxBytes: number; done: () => void } | { ok: false; refusal: UploadRefusal }> {
    if (this.now() - this.lastSweep > SWEEP_EVERY_MS) await this.sweep().catch(() => 0);
    const onDisk = await this.usage(client);
    const flying = this.inflight.get(client) ?? { files: 0, bytes: 0 };
    const files = onDisk.files + flying.files;
    const bytes = onDisk.bytes + flying.bytes;
    const hours = Math.round(this.limits.maxAgeMs / 360_000) / 10;
    if (files >= this.limits.maxFilesPerClient) {
      return {
        ok: false,
        refusal: {
          status: 429,
          code: 'upload_quota',
          message: `${client} already has ${files} uploads on this server (at most ${this.limits.maxFilesPerClient}); they are removed after ${hours} h${raisedBy('max_files_per_client')}`,
        },
      };
    }
    const room = this.limits.maxBytesPerClient - bytes;
    if (room <= 0) {
      return {
        ok: false,
        refusal: {
          status: 413,
          code: 'upload_quota',
          message: `${client} already has ${bytes} bytes of uploads stored or on their way to this server (at most ${this.limits.maxBytesPerClient}); they are removed after ${hours} h${raisedBy('max_bytes_per_client')}`,
        },
      };
    }
    const dir = join(this.uploadDir, clientFolder(client));
    await mkdir(dir, { recursive: true });
    const maxBytes = Math.min(this.limits.maxFileBytes, room);
    // the whole room is held while the file is on its way: concurrent uploads cannot each take it
    flying.files++;
    flying.bytes += maxBytes;
    this.inflight.set(client, flying);
    let held = true;
    return {
      ok: true,
      dir,
      maxBytes,
      done: () => {
        if (!held) return;
        held = false;
        flying.files--;
        flying.bytes -= maxBytes;
        if (flying.files === 0) this.inflight.delete(client);
      },
    };
  }

  /** The message of a file cut at `maxBytes`: which limit it met. */
  tooLarge(client: string, maxBytes: number): UploadRefusal {
    return maxBytes < this.limits.maxFileBytes
      ? {
          status: 413,
          code: 'upload_quota',
          message: `upload is larger than the ${maxBytes} bytes left of ${client}'s ${this.limits.maxBytesPerClient}-byte quota${raisedBy('max_bytes_per_client')}`,
        }
      : {
          status: 413,
          code: 'file_too_large',
          message: `upload is larger than the limit (${this.limits.maxFileBytes} bytes)${raisedBy('max_file_bytes')}`,
        };
  }
}
