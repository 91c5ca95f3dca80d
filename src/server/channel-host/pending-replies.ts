/**
 * A reply promised before its run exists: a chat message that will start a run is noted here (on
 * disk) before the run is created, and the note goes once the run's delivery record is written. A
 * process killed between the two (the run created, its delivery record not yet) leaves the note:
 * the next start finds the run the message started, by its conversation and the time, and delivers
 * its reply — or, when no run was created, tells the chat to send the message again — instead of a
 * run whose answer never reaches the chat (its message was taken, so the service will not send it again).
 */
import { createHash } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatAddress, ChatType } from '../../channels/channel-types.js';
import { ensureDir, readJsonFile, writeJsonFile } from './channel-files.js';

export interface PendingReply {
  /** the inbound delivery id of the message */
  delivery_id: string;
  conversation_id: string;
  to: ChatAddress;
  chat_type: ChatType;
  reply_to?: string;
  /** when the message was taken: a run it started was created at or after it (ISO time) */
  at: string;
}

function isPending(x: unknown): x is PendingReply {
  const p = x as PendingReply;
  return (
    !!p && typeof p.delivery_id === 'string' && typeof p.conversation_id === 'string' && !!p.to && typeof p.to.chat === 'string' && typeof p.at === 'string'
  );
}

export class PendingReplies {
  constructor(readonly dir: string) {}

  private fileOf(deliveryId: string): string {
    return join(this.dir, `${createHash('sha256').update(deliveryId).digest('hex').slice(0, 16)}.json`);
  }

  /** On the disk before it resolves: the run the message starts is created after it. */
  async add(p: PendingReply): Promise<void> {
    ensureDir(this.dir);
    await writeJsonFile(this.fileOf(p.delivery_id), p);
  }

  remove(deliveryId: string): void {
    rmSync(this.fileOf(deliveryId), { force: true });
  }

  /** The notes a dead process left. */
  list(): PendingReply[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    return names.map((n) => readJsonFile(join(this.dir, n))).filter(isPending);
  }
}
