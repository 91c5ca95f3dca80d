/**
 * The EventFanout of several nodes: each committed event goes onto a Redis Stream per run
 * (id `<seq>-0`, trimmed); a follower reads the run's history from PostgreSQL, then the live stream.
 * One blocking reader per node serves every follower on it. A follower behind the trimmed stream, or
 * one whose Redis is away, reads from PostgreSQL instead — never a gap, never a duplicate.
 */
import type { Redis } from 'ioredis';
import { isTerminalRunEvent, type AgentEvent } from '../events/agent-event.js';
import type { EventFanout } from '../runtime/storage/event-fanout.js';

export interface RedisEventFanoutOptions {
  /** Keys start with it (`<prefix>:events:<run_id>`). */
  prefix: string;
  /** Publishes (XADD), and unblocks the reader when a run is first followed. */
  writer: Redis;
  /** The blocking reader of this node (a connection of its own). */
  reader: Redis;
  /** The durable history: events after a seq, committed. */
  history: (runId: string, after: number) => Promise<AgentEvent[]>;
  /** Entries kept per stream; older ones are read from the database. Default 10,000. */
  maxLen?: number;
  /** How long a follower waits for the stream before it looks in the database (Redis away). Default 1,000 ms. */
  fallbackMs?: number;
}

interface Follower {
  last: number;
  queue: AgentEvent[];
  wake: (() => void) | null;
}

export class RedisEventFanout implements EventFanout {
  private readonly followers = new Map<string, Set<Follower>>();
  /** Last stream id the reader has seen, per followed run. */
  private readonly cursors = new Map<string, string>();
  private readerId: number | null = null;
  private reading = false;
  private closed = false;

  constructor(private readonly o: RedisEventFanoutOptions) {
    // a reconnected reader is a new client: its id is asked again before the next unblock
    o.reader.on('ready', () => (this.readerId = null));
  }

  private key(runId: string): string {
    return `${this.o.prefix}:events:${runId}`;
  }

  publish(runId: string, event: AgentEvent): void {
    this.publishAll(runId, [event]);
  }

  /** A committed batch in one round trip; `lines` are the events' JSON when the caller has them. */
  publishAll(runId: string, events: readonly AgentEvent[], lines?: readonly string[]): void {
    const key = this.key(runId);
    const maxLen = String(this.o.maxLen ?? 10_000);
    const p = this.o.writer.pipeline();
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      p.xadd(key, 'MAXLEN', '~', maxLen, `${event.seq}-0`, 'e', lines?.[i] ?? JSON.stringify(event));
      // a finished run's stream goes after a day; its history stays in the database
      if (isTerminalRunEvent(event)) p.expire(key, 86_400);
    }
    // Redis away: readers fall back to the database, which already has the events
    p.exec().catch(() => undefined);
  }

  follow(runId: string, after: number, signal?: AbortSignal): AsyncIterable<AgentEvent> {
    return { [Symbol.asyncIterator]: () => this.iterate(runId, after, signal) };
  }

  private async *iterate(runId: string, after: number, signal?: AbortSignal): AsyncGenerator<AgentEvent> {
    const me: Follower = { last: after, queue: [], wake: null };
    this.add(runId, me);
    const onAbort = () => me.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      // history first; events the stream delivers meanwhile are kept and de-duplicated by seq
      for (const e of await this.o.history(runId, me.last)) {
        if (signal?.aborted) return;
        me.last = e.seq;
        yield e;
        if (isTerminalRunEvent(e)) return;
      }
      for (;;) {
        while (me.queue.length) {
          const e = me.queue.shift()!;
          if (e.seq <= me.last) continue;
          if (e.seq > me.last + 1) {
            // the stream skipped (trimmed, or Redis restarted): the database fills the gap
            for (const h of await this.o.history(runId, me.last)) {
              if (h.seq > e.seq) break;
              me.last = h.seq;
              yield h;
              if (isTerminalRunEvent(h)) return;
            }
            if (e.seq <= me.last) continue;
          }
          me.last = e.seq;
          yield e;
          if (isTerminalRunEvent(e)) return;
        }
        if (signal?.aborted) return;
        const woke = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), this.o.fallbackMs ?? 1_000);
          me.wake = () => {
            clearTimeout(t);
            resolve(true);
          };
        });
        me.wake = null;
        if (!woke && !me.queue.length) {
          // nothing from the stream for a while: the database is the truth (Redis may be away)
          for (const h of await this.o.history(runId, me.last)) {
            if (signal?.aborted) return;
            me.last = h.seq;
            yield h;
            if (isTerminalRunEvent(h)) return;
          }
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.remove(runId, me);
    }
  }

  private add(runId: string, f: Follower): void {
    let set = this.followers.get(runId);
    if (!set) {
      set = new Set();
      this.followers.set(runId, set);
      this.cursors.set(runId, `${f.last}-0`);
      // the reader is blocked on the other streams: wake it so it reads this one too
      if (this.readerId !== null) void this.o.writer.call('CLIENT', 'UNBLOCK', String(this.readerId)).catch(() => undefined);
    } else {
      const cur = this.cursors.get(runId)!;
      if (Number(cur.split('-')[0]) > f.last) this.cursors.set(runId, `${f.last}-0`);
    }
    set.add(f);
    if (!this.reading) void this.readLoop();
  }

  private remove(runId: string, f: Follower): void {
    const set = this.followers.get(runId);
    if (!set) return;
    set.delete(f);
    if (set.size === 0) {
      this.followers.delete(runId);
      this.cursors.delete(runId);
    }
  }

  /** One blocking XREAD over every followed run's stream, dispatching entries to their followers. */
  private async readLoop(): Promise<void> {
    this.reading = true;
    try {
      while (!this.closed && this.followers.size) {
        if (this.readerId === null) this.readerId = Number(await this.o.reader.client('ID').catch(() => -1));
        const runs = [...this.cursors.keys()];
        let res: Array<[string, Array<[string, string[]]>]> | null;
        try {
          res = (await this.o.reader.xread('BLOCK', 1_000, 'STREAMS', ...runs.map((r) => this.key(r)), ...runs.map((r) => this.cursors.get(r)!))) as typeof res;
        } catch {
          // Redis away: followers read the database on their own meanwhile
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        for (const [key, entries] of res ?? []) {
          const runId = key.slice(this.o.prefix.length + ':events:'.length);
          const set = this.followers.get(runId);
          for (const [id, fields] of entries) {
            if (this.cursors.has(runId)) this.cursors.set(runId, id);
            if (!set) continue;
            const line = fields[1];
            let ev: AgentEvent;
            try {
              ev = JSON.parse(line) as AgentEvent;
            } catch {
              continue;
            }
            for (const f of set) {
              f.queue.push(ev);
              f.wake?.();
            }
          }
        }
      }
    } finally {
      this.reading = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.followers.values()) for (const f of set) f.wake?.();
  }
}
