/**
 * One run's reply in one chat, as sent so far: each message has a key (`preview`, `part:2`,
 * `file:artifacts/report.md`, `approval:apr_…`) and is sent at most once under it. The record is on
 * disk before and after each send, so a restart continues the reply instead of posting it again; a send
 * a crash interrupted is repeated only where the service de-duplicates it by key.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatAddress, ChatType } from '../../channels/channel-types.js';
import type { RetryOutcome } from '../../channels/send-retry.js';
import { ensureDir, readJsonFile, writeJsonFile } from './channel-files.js';

export interface DeliveryRecord {
  run_id: string;
  to: ChatAddress;
  chat_type: ChatType;
  /** The message the reply answers. */
  reply_to?: string;
  /** `live`: a preview edited in place, then the answer; `final`: the answer only (an announcement). */
  mode: 'live' | 'final';
  /** Message id by key; `maybe` for a send that may have landed and is not repeated, `rejected` for one the service refused for good. */
  sent: Record<string, string>;
  /** A send begun and not known to have ended. */
  in_flight?: string;
  finished: boolean;
  created_at: string;
}

export type OnceResult =
  | { kind: 'sent'; messageId: string; outcome: RetryOutcome }
  | { kind: 'already'; messageId: string | null }
  | { kind: 'failed'; outcome: RetryOutcome };

function isRecord(x: unknown): x is DeliveryRecord {
  const r = x as DeliveryRecord;
  return !!r && typeof r.run_id === 'string' && !!r.to && typeof r.to.chat === 'string' && typeof r.sent === 'object' && r.sent !== null;
}

export class DeliveryLog {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    readonly record: DeliveryRecord,
  ) {}

  static fileFor(dir: string, runId: string, to: ChatAddress): string {
    const where = createHash('sha256')
      .update(`${to.chat}\n${to.thread ?? ''}`)
      .digest('hex')
      .slice(0, 12);
    return join(dir, `${runId}.${where}.json`);
  }

  /** The record of this run in this chat: the one on disk, or a new one. */
  static async open(dir: string, init: Omit<DeliveryRecord, 'sent' | 'finished' | 'created_at'>): Promise<DeliveryLog> {
    ensureDir(dir);
    const file = DeliveryLog.fileFor(dir, init.run_id, init.to);
    const read = readJsonFile(file);
    if (isRecord(read)) return new DeliveryLog(file, read);
    const log = new DeliveryLog(file, { ...init, sent: {}, finished: false, created_at: new Date().toISOString() });
    await log.save();
    return log;
  }

  /** The unfinished records of a folder (what a restart continues). */
  static unfinished(dir: string): DeliveryLog[] {
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const out: DeliveryLog[] = [];
    for (const n of names) {
      const read = readJsonFile(join(dir, n));
      if (isRecord(read) && !read.finished) out.push(new DeliveryLog(join(dir, n), read));
    }
    return out;
  }

  save(): Promise<void> {
    const snapshot = JSON.parse(JSON.stringify(this.record)) as DeliveryRecord;
    this.writing = this.writing.then(() => writeJsonFile(this.file, snapshot));
    return this.writing;
  }

  /** The message id sent under `key` (null when it may have landed or was refused for good), or undefined when nothing was. */
  sentUnder(key: string): string | null | undefined {
    const v = this.record.sent[key];
    return v === undefined ? undefined : v === 'maybe' || v === 'rejected' ? null : v;
  }

  /**
   * Sends under `key` unless it was sent before. A send a crash interrupted counts as sent (it may have
   * landed) unless `keyed`: the service drops a repeat with the same key, so it is sent again.
   */
  async once(key: string, keyed: boolean, send: () => Promise<RetryOutcome>): Promise<OnceResult> {
    const had = this.sentUnder(key);
    if (had !== undefined) return { kind: 'already', messageId: had };
    if (this.record.in_flight === key && !keyed) {
      this.record.sent[key] = 'maybe';
      this.record.in_flight = undefined;
      await this.save();
      return { kind: 'already', messageId: null };
    }
    this.record.in_flight = key;
    await this.save();
    const outcome = await send();
    this.record.in_flight = undefined;
    if (outcome.result.ok) this.record.sent[key] = outcome.result.messageId;
    else if (outcome.mayHaveLanded) this.record.sent[key] = 'maybe';
    else if (outcome.result.failure.kind === 'rejected') this.record.sent[key] = 'rejected';
    await this.save();
    return outcome.result.ok ? { kind: 'sent', messageId: outcome.result.messageId, outcome } : { kind: 'failed', outcome };
  }

  /** Records what was done without a send of its own (an edit that made the preview the answer's first part). */
  async mark(key: string, messageId: string): Promise<void> {
    this.record.sent[key] = messageId;
    await this.save();
  }

  async finish(): Promise<void> {
    this.record.finished = true;
    await this.save();
  }
}
