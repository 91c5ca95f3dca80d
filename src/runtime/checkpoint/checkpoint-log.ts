/**
 * An append-only log of checksummed JSON records, the form a run's checkpoint takes on disk.
 * Each line is `<crc32 hex> <json>\n`: a record is whole only when its checksum matches, so a write a
 * crash cut short (a torn write) or a damaged disk block is found, never read as a shorter record.
 *
 * The records of one synchronous burst go to the file together at its end, in one write: a process
 * killed (SIGKILL, OOM) after that loses nothing. Flushing to the disk itself (fdatasync, ~3 ms here)
 * follows in the background within FLUSH_DELAY_MS, one flush for the writes of that time; `durable()`
 * writes and flushes at once, where losing a record to a power cut would repeat a side effect
 * (before a tool that is not idempotent runs).
 */
import { close, closeSync, fdatasync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/** One record's line as written. */
export function checkpointLine(record: unknown, mask: (json: string) => string = (j) => j): string {
  const json = mask(JSON.stringify(record));
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export type CheckpointRead<R> =
  /** `tornTail`: the last line was cut short or does not match its checksum — the write the crash
   *  interrupted; it is left out (what it recorded is redone), the records before it stand. */
  { ok: true; records: R[]; tornTail: boolean } | { ok: false; line: number; reason: string };

/**
 * The records of a log. A damaged line before the last one is corruption, not a torn write: the file
 * cannot be trusted and the read fails, saying which line and why.
 */
export function readCheckpointLog<R>(text: string): CheckpointRead<R> {
  const lines = text.split('\n');
  // a file ending in '\n' splits into a last empty string; anything else there is a line cut short
  const tail = lines.pop() ?? '';
  const records: R[] = [];
  for (let i = 0; i < lines.length; i++) {
    const parsed = parseLine<R>(lines[i]);
    if (parsed.ok) {
      records.push(parsed.record);
      continue;
    }
    if (i === lines.length - 1 && tail === '') return { ok: true, records, tornTail: true };
    return { ok: false, line: i + 1, reason: parsed.reason };
  }
  return { ok: true, records, tornTail: tail !== '' };
}

function parseLine<R>(line: string): { ok: true; record: R } | { ok: false; reason: string } {
  const space = line.indexOf(' ');
  if (space !== 8) return { ok: false, reason: 'no checksum at the start of the line' };
  const json = line.slice(9);
  const want = line.slice(0, 8);
  const got = crc32(json).toString(16).padStart(8, '0');
  if (want !== got) return { ok: false, reason: `checksum ${got} does not match the recorded ${want}` };
  try {
    return { ok: true, record: JSON.parse(json) as R };
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
}

/** Reads a log file; a missing file is an empty log. */
export function readCheckpointFile<R>(file: string): CheckpointRead<R> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, records: [], tornTail: false };
    return { ok: false, line: 0, reason: `cannot be read: ${(e as Error).message}` };
  }
  return readCheckpointLog<R>(text);
}

/**
 * Cuts a torn last record off the file, so that what a resumed attempt appends starts on a line of
 * its own (glued to the torn bytes it would be unreadable). Returns whether it cut anything.
 *
 * Only the last line is read: a crash can tear nothing else. Reading and checking the whole file
 * again (the resume has just loaded it) took 21 ms for a 990-call run's 640 KiB checkpoint and
 * 52 ms for 1,343 KiB, growing with the run; its last line takes 0.1 ms. A damaged line before it
 * is for the load to find (the resume then fails, saying which line).
 */
export function repairCheckpointFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch {
    return false;
  }
  try {
    const last = lastLine(fd, fstatSync(fd).size);
    // a last line that has its newline and matches its checksum is whole
    if (!last || (last.newline && parseLine(last.text).ok)) return false;
    ftruncateSync(fd, last.start);
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Bytes read at a time, from the end of a log back, to find the start of its last line. */
const TAIL_CHUNK = 64 * 1024;

/** The last line of a log: where it starts, its text, and whether its newline was written; null for an empty file. */
function lastLine(fd: number, size: number): { start: number; text: string; newline: boolean } | null {
  if (size === 0) return null;
  const newline = readAt(fd, size - 1, 1)[0] === 0x0a;
  const chunks: Buffer[] = [];
  let start = 0;
  for (let pos = newline ? size - 1 : size; pos > 0; ) {
    const from = Math.max(0, pos - TAIL_CHUNK);
    const buf = readAt(fd, from, pos - from);
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) {
      chunks.unshift(buf.subarray(nl + 1));
      start = from + nl + 1;
      break;
    }
    chunks.unshift(buf);
    pos = from;
  }
  // decoded whole: a character cut between two chunks is whole again
  return { start, text: Buffer.concat(chunks).toString('utf8'), newline };
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let off = 0;
  while (off < length) {
    const n = readSync(fd, buf, off, length - off, position + off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/** A log of checkpoint records (`R`) appended in order, as the file's writer and a shared store's keep it. */
export interface CheckpointLog<R> {
  append(record: R): void;
  /** Queues a record made only when it is written or another is appended after it; until then a
   *  later appendLast replaces it (its caller folds the replaced one into the new one). */
  appendLast(make: () => R): void;
  /** The record appendLast queued is made now, in its place before whatever follows it. */
  settleLast(): void;
  /** Resolves once every record appended so far is durable; rejects when a write failed. */
  durable(): Promise<void>;
  /** Makes what is left durable and closes the log. */
  close(): Promise<void>;
}

/** How long after a write its background flush to the disk may wait (flushes are shared by the writes of that time). */
export const FLUSH_DELAY_MS = 50;

export class CheckpointLogWriter<R> implements CheckpointLog<R> {
  private fd: number | null;
  /** lines appended in this turn of the event loop, written together at its end */
  private pending: string[] = [];
  /** the record queued by `appendLast`, not made into a line yet */
  private last: (() => R) | null = null;
  private writeQueued = false;
  /** written and not yet flushed to the disk */
  private dirty = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private failure: Error | null = null;
  appended = 0;
  bytes = 0;

  /** `mask`: applied to each record's JSON before it is written (the run's secrets). */
  constructor(
    readonly file: string,
    private readonly mask?: (json: string) => string,
  ) {
    this.fd = openSync(file, 'a');
  }

  /** Queues the record: the records of one synchronous burst go to the file in one write, at its end. */
  append(record: R): void {
    if (this.fd === null) return;
    this.settleLast();
    this.pending.push(checkpointLine(record, this.mask));
    this.appended++;
    this.queueWrite();
  }

  /**
   * Queues a record whose line is made only when it is written or another record is appended after
   * it: until then, a later `appendLast` replaces it (its caller folds what the replaced one carried
   * into the new one). The records stay in the order they were appended in; what is saved is making
   * the lines of records that a newer one supersedes within one burst.
   */
  appendLast(make: () => R): void {
    if (this.fd === null) return;
    this.last = make;
    this.queueWrite();
  }

  /** The record `appendLast` queued becomes a line now, in its place before whatever follows it. */
  settleLast(): void {
    const make = this.last;
    if (!make) return;
    this.last = null;
    try {
      this.pending.push(checkpointLine(make(), this.mask));
      this.appended++;
    } catch (e) {
      // a record that cannot be serialised is not written; the writer says why at the next durable()
      this.failure ??= e as Error;
    }
  }

  private queueWrite(): void {
    if (this.writeQueued) return;
    this.writeQueued = true;
    queueMicrotask(() => this.writeNow());
  }

  /** Writes the queued lines whole (a short write is continued); throws when the disk refuses. */
  private writeNow(): void {
    this.writeQueued = false;
    this.settleLast();
    if (this.fd === null || this.pending.length === 0) return;
    const buf = Buffer.from(this.pending.join(''));
    this.pending = [];
    let off = 0;
    try {
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      this.failure ??= e as Error;
      return;
    }
    this.bytes += buf.length;
    this.dirty = true;
    // a killed process loses nothing written; a power cut loses at most the last FLUSH_DELAY_MS
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, FLUSH_DELAY_MS);
    this.flushTimer.unref?.();
  }

  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.dirty || this.fd === null) return Promise.resolve();
    const fd = this.fd;
    this.dirty = false;
    this.flushing = new Promise<void>((resolve) =>
      fdatasync(fd, (err) => {
        if (err) this.failure ??= err;
        this.flushing = null;
        resolve();
      }),
    );
    return this.flushing;
  }

  /** Resolves once every record appended so far is on the disk; rejects when a write or flush failed. */
  async durable(): Promise<void> {
    this.writeNow();
    while (this.flushing || (this.dirty && this.fd !== null)) await this.flush();
    if (this.failure) throw this.failure;
  }

  /** Writes and flushes what is left and closes the file (after a flush in flight: its descriptor must stay open until then). */
  async close(): Promise<void> {
    if (this.fd === null) return;
    this.writeNow();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const fd = this.fd;
    this.fd = null;
    await this.flushing;
    // off the main thread: a run's end must not stall every other run for a flush (the triggers
    // bench's profile showed 1.4 s of synchronous fdatasync at run ends). A filesystem that refuses
    // to flush does not undo the records written.
    if (this.dirty) await new Promise<void>((resolve) => fdatasync(fd, () => resolve()));
    await new Promise<void>((resolve) => close(fd, () => resolve()));
  }
}
