/**
 * runtime/events.jsonl: every AgentEvent of a run, one JSON line each, in seq order — the source of
 * replay. The lines a burst of publishes appends are written together, in one write, in a microtask
 * queued at the burst's first append: before any reader (they all take events asynchronously) sees
 * one of them; a reader subscribes, takes `unwritten()`, then reads the file, and so misses nothing
 * (see tailRunEvents). close() writes what is left, then fsyncs and closes off the main thread.
 */
import { close as closeFd, existsSync, fsync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AgentEvent } from '../../events/agent-event.js';
import { isAgentStream, makeAgentEvent } from '../../events/agent-event-factory.js';
import { eventLine } from './event-line.js';

/** Lines kept in memory while the disk refuses them (ENOSPC); past it new events are dropped. */
export const MAX_PENDING_LINES = 10_000;

/** A burst this long is written at once rather than at its end (it would hold too much in memory). */
const BURST_LINES = 512;
/** Characters joined into one write at most (a longer burst takes several writes). */
const MAX_WRITE_CHARS = 4 * 1024 * 1024;

export class EventStore {
  private fd: number | null;
  private count = 0;
  private lastSeqWritten = 0;
  /** lines not (fully) written yet, oldest first */
  private pending: Array<{ line: string; seq: number; event: AgentEvent }> = [];
  /** the write in progress: the first `lines` pending lines as bytes, `offset` of them on disk */
  private chunk: { buf: Buffer; lines: number; offset: number } | null = null;
  private scheduled = false;
  private closing: Promise<void> | null = null;
  private readonly flushTask = (): void => {
    this.scheduled = false; // a queued task that finds nothing pending does nothing
    try {
      this.drain();
    } catch {
      // the disk refuses: the lines stay pending, retried by the next append and by close()
    }
  };

  constructor(readonly file: string) {
    this.fd = openSync(file, 'a');
  }

  get written(): number {
    return this.count;
  }

  get lastSeq(): number {
    return this.lastSeqWritten;
  }

  append(event: AgentEvent): void {
    if (this.fd === null) return; // closed: late events after the terminal one are not part of the run
    let line: string;
    try {
      line = eventLine(event);
    } catch {
      // data JSON cannot hold (a BigInt, a cycle in a tool's details): keep the event, degraded, rather
      // than leave a seq gap that replay and resuming clients would trip on
      line = JSON.stringify(jsonSafe(event, []));
    }
    if (this.pending.length >= MAX_PENDING_LINES) throw new Error(`events.jsonl: ${MAX_PENDING_LINES} lines wait for disk space; event ${event.seq} dropped`);
    this.pending.push({ line: `${line}\n`, seq: event.seq, event });
    if (this.pending.length >= BURST_LINES) this.flushTask();
    else if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flushTask);
    }
  }

  /** Events after `after` published to this store but not (fully) on disk yet (the burst's write is queued, or the disk refused it). */
  unwritten(after = 0): AgentEvent[] {
    return this.pending.filter((p) => p.seq > after).map((p) => p.event);
  }

  /** Writes the pending lines whole and in order; a short write is continued, never glued to the next line. */
  private drain(): void {
    while (this.pending.length && this.fd !== null) {
      this.chunk ??= this.nextChunk();
      const c = this.chunk;
      while (c.offset < c.buf.length) {
        const n = writeSync(this.fd, c.buf, c.offset, c.buf.length - c.offset);
        if (n <= 0) throw new Error('events.jsonl: the write made no progress');
        c.offset += n;
      }
      this.chunk = null;
      this.count += c.lines;
      this.lastSeqWritten = this.pending[c.lines - 1].seq;
      this.pending.splice(0, c.lines);
    }
  }

  private nextChunk(): { buf: Buffer; lines: number; offset: number } {
    let text = '';
    let lines = 0;
    while (lines < this.pending.length && (lines === 0 || text.length + this.pending[lines].line.length <= MAX_WRITE_CHARS)) {
      text += this.pending[lines].line;
      lines++;
    }
    return { buf: Buffer.from(text), lines, offset: 0 };
  }

  /**
   * Writes what is left (at once: readers find every line on return), then fsyncs and closes off the
   * main thread: when many runs end together their fsyncs must not queue on it. `settled()` resolves
   * once the file is synced and closed.
   */
  close(): void {
    if (this.fd === null) return;
    try {
      this.drain();
    } catch {
      // the disk is still full: those lines are lost (readers skip a torn last line)
    }
    const fd = this.fd;
    this.fd = null;
    // fsync is best effort (some filesystems refuse it); the file is closed either way
    this.closing = new Promise<void>((resolve) => fsync(fd, () => closeFd(fd, () => resolve())));
  }

  /** Resolves once close() has synced and closed the file (at once while it is open). */
  settled(): Promise<void> {
    return this.closing ?? Promise.resolve();
  }
}

/** A copy JSON can write: BigInt as its digits, a reference to an enclosing object as "[Circular]". */
function jsonSafe(v: unknown, ancestors: object[]): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || typeof v !== 'object') return v;
  if (ancestors.includes(v)) return '[Circular]';
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    try {
      return jsonSafe(toJSON.call(v), ancestors);
    } catch {
      return String(v);
    }
  }
  const inner = [...ancestors, v];
  if (Array.isArray(v)) return v.map((x) => jsonSafe(x, inner));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = jsonSafe(x, inner);
  return out;
}

/** Lifts one parsed line back to an AgentEvent through the factory; null when it is not one. */
export function eventFromJson(x: unknown): AgentEvent | null {
  if (!x || typeof x !== 'object') return null;
  const o = x as Record<string, unknown>;
  if (typeof o.runId !== 'string' || typeof o.seq !== 'number' || typeof o.ts !== 'number' || !isAgentStream(o.stream)) return null;
  if (!o.data || typeof o.data !== 'object') return null;
  // data was written by the factory and is trusted as that stream's payload
  return makeAgentEvent(o.runId, o.seq, o.ts, o.stream, o.data as never);
}

export function parseEventLines(text: string, after = 0): AgentEvent[] {
  const out: AgentEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // a torn last line (crash mid-write) is skipped, repaired by RunService.init
    }
    const ev = eventFromJson(parsed);
    if (ev && ev.seq > after) out.push(ev);
  }
  return out;
}

/**
 * A live run's log is read by each client that connects to it; while it is small it is read at once
 * (tens of µs) rather than through four thread-pool round trips, which a burst of connecting clients
 * queues behind every other file operation. Past this size the read goes to the pool.
 */
const SYNC_READ_BYTES = 256 * 1024;

export async function readEvents(file: string, after = 0): Promise<AgentEvent[]> {
  let text: string;
  try {
    text = statSync(file).size <= SYNC_READ_BYTES ? readFileSync(file, 'utf8') : await readFile(file, 'utf8');
  } catch {
    return [];
  }
  return parseEventLines(text, after);
}

/**
 * Drops a torn trailing line (no newline, or not JSON) left by a crash; returns the last good seq.
 */
export function repairEventsFile(file: string): { lastSeq: number; repaired: boolean } {
  if (!existsSync(file)) return { lastSeq: 0, repaired: false };
  const buf = readFileSync(file);
  let text = buf.toString('utf8');
  let repaired = false;
  if (text.length && !text.endsWith('\n')) {
    const cut = text.lastIndexOf('\n') + 1;
    truncateSync(file, Buffer.byteLength(text.slice(0, cut)));
    text = text.slice(0, cut);
    repaired = true;
  }
  // a complete but corrupt last line is cut as well
  const lines = text.split('\n').filter(Boolean);
  while (lines.length) {
    try {
      JSON.parse(lines[lines.length - 1]);
      break;
    } catch {
      lines.pop();
      repaired = true;
    }
  }
  if (repaired) truncateSync(file, Buffer.byteLength(lines.length ? `${lines.join('\n')}\n` : ''));
  // seqs only grow in the log, so the last line that is an event holds the last seq: the file is not
  // parsed whole again (a resume reads its events once more anyway, where it needs them)
  for (let i = lines.length - 1; i >= 0; i--) {
    const [last] = parseEventLines(lines[i]);
    if (last) return { lastSeq: last.seq, repaired };
  }
  return { lastSeq: 0, repaired };
}
