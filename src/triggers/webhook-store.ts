/**
 * Where completion webhooks wait across restarts: a run's destinations (secrets included, so kept
 * out of its run folder, owner-only), the run events already reported, and each message's state.
 * One node: `<dataDir>/webhooks/open/<run_id>.json` while something is left to do, moved to
 * `closed/` once the run ended and every message is final. Several nodes: PostgreSQL (pg-trigger-store.ts).
 * A lease on a message keeps two processes from sending it at once.
 */
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { LockedJsonFile } from './locked-json-file.js';
import type { StoredTarget, WebhookMessage } from './types.js';

/** What a store holds of one run. */
export interface RunWebhooks {
  run_id: string;
  targets: StoredTarget[];
  /** the run events made into messages already ('end', 'approval:<seq>') */
  reported: string[];
  ended: boolean;
  messages: WebhookMessage[];
}

export interface WebhookStore {
  /** Records a run's destinations; a run registered already keeps its first ones. */
  register(runId: string, targets: StoredTarget[]): Promise<void>;
  get(runId: string): Promise<RunWebhooks | null>;
  /** Adds the messages of one run event unless it was reported already; returns those added. */
  report(runId: string, key: string, messages: WebhookMessage[], ended: boolean): Promise<WebhookMessage[]>;
  /** Runs with destinations whose end is not reported yet. */
  openRuns(): Promise<string[]>;
  /** Pending messages due by `dueBy` whose lease is free (or `owner`'s), now leased to `owner` until `leaseUntil`. */
  lease(owner: string, dueBy: number, leaseUntil: number, limit: number, now: number): Promise<WebhookMessage[]>;
  /** A message's state after an attempt or a redelivery (by webhook_id). */
  save(msg: WebhookMessage): Promise<void>;
  /** `owner`'s pending messages free again (a process that stops hands them back: the next one takes
   *  them up when they are due, not when the lease runs out). */
  release(owner: string): Promise<void>;
  close(): Promise<void>;
}

function emptyRun(runId: string): RunWebhooks {
  return { run_id: runId, targets: [], reported: [], ended: false, messages: [] };
}

const isClosed = (r: RunWebhooks) => r.ended && r.messages.every((m) => m.state !== 'pending');

export class FileWebhookStore implements WebhookStore {
  private readonly openDir: string;
  private readonly closedDir: string;
  private readonly files = new Map<string, LockedJsonFile<RunWebhooks>>();

  constructor(dataDir: string) {
    this.openDir = join(dataDir, 'webhooks', 'open');
    this.closedDir = join(dataDir, 'webhooks', 'closed');
  }

  private file(runId: string): LockedJsonFile<RunWebhooks> {
    let f = this.files.get(runId);
    if (!f) {
      f = new LockedJsonFile(join(this.openDir, `${runId}.json`), () => emptyRun(runId));
      this.files.set(runId, f);
    }
    return f;
  }

  private async closedFile(runId: string): Promise<RunWebhooks | null> {
    const f = new LockedJsonFile<RunWebhooks | null>(join(this.closedDir, `${runId}.json`), () => null);
    return f.read();
  }

  /** A closed run's file back among the open ones (a redelivery). */
  private async reopen(runId: string): Promise<boolean> {
    try {
      await mkdir(this.openDir, { recursive: true, mode: 0o700 });
      await rename(join(this.closedDir, `${runId}.json`), join(this.openDir, `${runId}.json`));
      return true;
    } catch {
      return false;
    }
  }

  /** Moves a finished run's file out of the open ones, and forgets it here. */
  private async closeIfDone(runId: string, r: RunWebhooks): Promise<void> {
    if (!isClosed(r)) return;
    await mkdir(this.closedDir, { recursive: true, mode: 0o700 });
    await rename(join(this.openDir, `${runId}.json`), join(this.closedDir, `${runId}.json`)).catch(() => undefined);
    this.files.delete(runId);
  }

  async register(runId: string, targets: StoredTarget[]): Promise<void> {
    await this.file(runId).update((r) => {
      if (r.targets.length) return { result: undefined, changed: false };
      r.targets = targets;
      return { result: undefined, changed: true };
    });
  }

  async get(runId: string): Promise<RunWebhooks | null> {
    const r = await this.file(runId).read();
    if (r.targets.length) return r;
    this.files.delete(runId);
    return this.closedFile(runId);
  }

  async report(runId: string, key: string, messages: WebhookMessage[], ended: boolean): Promise<WebhookMessage[]> {
    const { added, snapshot } = await this.file(runId).update((r) => {
      if (!r.targets.length || r.reported.includes(key)) return { result: { added: [] as WebhookMessage[], snapshot: r }, changed: false };
      r.reported.push(key);
      r.messages.push(...messages);
      if (ended) r.ended = true;
      return { result: { added: messages, snapshot: r }, changed: true };
    });
    await this.closeIfDone(runId, snapshot);
    return added;
  }

  async openRuns(): Promise<string[]> {
    const names = await readdir(this.openDir).catch(() => [] as string[]);
    const out: string[] = [];
    for (const n of names) {
      if (!n.endsWith('.json')) continue;
      const runId = n.slice(0, -5);
      const r = await this.file(runId)
        .read()
        .catch(() => null);
      if (r?.targets.length && !r.ended) out.push(runId);
    }
    return out;
  }

  async lease(owner: string, dueBy: number, leaseUntil: number, limit: number, now: number): Promise<WebhookMessage[]> {
    const names = await readdir(this.openDir).catch(() => [] as string[]);
    const out: WebhookMessage[] = [];
    for (const n of names) {
      if (out.length >= limit) break;
      if (!n.endsWith('.json')) continue;
      const got = await this.file(n.slice(0, -5)).update((r) => {
        const mine: WebhookMessage[] = [];
        for (const m of r.messages) {
          if (out.length + mine.length >= limit) break;
          if (m.state !== 'pending' || m.next_attempt_at === null || m.next_attempt_at > dueBy) continue;
          if (m.lease_owner && m.lease_owner !== owner && (m.lease_until ?? 0) > now) continue;
          m.lease_owner = owner;
          m.lease_until = leaseUntil;
          mine.push({ ...m });
        }
        return { result: mine, changed: mine.length > 0 };
      });
      out.push(...got);
    }
    return out;
  }

  async save(msg: WebhookMessage): Promise<void> {
    const runId = msg.run_id;
    if (msg.state === 'pending' && !(await this.file(runId).mtime())) await this.reopen(runId);
    const snapshot = await this.file(runId).update((r) => {
      const i = r.messages.findIndex((m) => m.webhook_id === msg.webhook_id);
      if (i < 0) return { result: r, changed: false };
      r.messages[i] = msg;
      return { result: r, changed: true };
    });
    await this.closeIfDone(runId, snapshot);
  }

  async release(owner: string): Promise<void> {
    const names = await readdir(this.openDir).catch(() => [] as string[]);
    for (const n of names) {
      if (!n.endsWith('.json')) continue;
      await this.file(n.slice(0, -5)).update((r) => {
        let changed = false;
        for (const m of r.messages) {
          if (m.state !== 'pending' || m.lease_owner !== owner) continue;
          delete m.lease_owner;
          delete m.lease_until;
          changed = true;
        }
        return { result: undefined, changed };
      });
    }
  }

  async close(): Promise<void> {}
}
