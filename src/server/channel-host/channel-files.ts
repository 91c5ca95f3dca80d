/**
 * What a channel keeps on disk, under `<dataDir>/channels/<name>/`: its own small store (Telegram's
 * update offset), the inbound deliveries already handled, and one record per run it answers. Files are
 * the owner's only; they hold chat ids, never secrets.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { appendFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFile } from '../../runtime/storage/replace-file.js';
import type { ChannelStore } from '../../channels/channel-types.js';

export function channelDir(dataDir: string, name: string): string {
  return join(dataDir, 'channels', name);
}

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Writes `value` as JSON to `file` whole (a crash leaves the old file or the new one), owner-only. */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await replaceFile(tmp, file, `${JSON.stringify(value, null, 1)}\n`);
  await chmod(file, 0o600).catch(() => undefined);
}

export function readJsonFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** ChannelStore over `store.json`: read once, written whole at each change, one write at a time. */
export class JsonChannelStore implements ChannelStore {
  private readonly data: Record<string, unknown>;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {
    const read = readJsonFile(file);
    this.data = read && typeof read === 'object' && !Array.isArray(read) ? (read as Record<string, unknown>) : {};
  }

  get(key: string): unknown {
    return this.data[key];
  }

  set(key: string, value: unknown): Promise<void> {
    this.data[key] = value;
    const snapshot = { ...this.data };
    this.writing = this.writing.then(() => writeJsonFile(this.file, snapshot)).catch(() => undefined);
    return this.writing;
  }
}

/**
 * The inbound deliveries a channel has taken (Telegram update_id, Slack event_id, Feishu event_id), so
 * one delivered twice — a retry of the service, or a replay after a restart — is handled once. An id is
 * written before its message is handled: a crash in between loses that message rather than answering twice.
 */
export class InboundLedger {
  private readonly ids = new Set<string>();
  private order: string[] = [];
  private lines = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    /** ids remembered; services resend within minutes to a day, far fewer than this many deliveries */
    private readonly keep = 20_000,
  ) {
    if (!existsSync(file)) return;
    for (const id of readFileSync(file, 'utf8').split('\n')) if (id) this.remember(id);
    this.lines = this.order.length;
  }

  private remember(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    this.order.push(id);
    if (this.order.length > this.keep) {
      const drop = this.order.length - this.keep;
      for (const old of this.order.slice(0, drop)) this.ids.delete(old);
      this.order = this.order.slice(drop);
    }
  }

  /** True when `id` is new: it is remembered (on disk once the promise resolves). False for a repeat. */
  take(id: string): { fresh: boolean; saved: Promise<void> } {
    if (this.ids.has(id)) return { fresh: false, saved: Promise.resolve() };
    this.remember(id);
    this.lines++;
    const compact = this.lines > this.keep * 2;
    if (compact) this.lines = this.order.length;
    const text = compact ? `${this.order.join('\n')}\n` : `${id}\n`;
    this.writing = this.writing
      .then(() => (compact ? replaceFile(`${this.file}.${process.pid}.tmp`, this.file, text) : appendFile(this.file, text, { mode: 0o600 })))
      .catch(() => undefined);
    return { fresh: true, saved: this.writing };
  }
}
