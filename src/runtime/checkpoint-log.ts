/**
 * An append-only log of checksummed JSON records, the form a run's checkpoint takes on disk.
 * Each line is `<crc32 hex> <json>\n`: a record is whole only when its checksum matches, so a write a
 * crash cut short (a torn write) or a damaged disk block is found, never read as a shorter record.
 *
 * Appends go to the file at once, in one write each: a process that is killed (SIGKILL, OOM) loses
 * nothing it appended. Flushing to the disk itself (fdatasync, ~3 ms here) runs in the background,
 * several appends per flush; `durable()` waits for it where losing a record to a power cut would
 * repeat a side effect (before a tool that is not idempotent runs).
 */
import { closeSync, fdatasync, fdatasyncSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/** One record's line as written. */
export function checkpointLine(record: unknown, mask: (json: string) => string = (j) => j): string {
  const json = mask(JSON.stringify(record));
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export type CheckpointRead<R> =
  /** `tornTail`: the last line was cut short or does not match its checksum — the write the crash
   *  interrupted; it is left out (what it recorded is redone), the records before it stand. */
  | { ok: true; records: R[]; tornTail: boolean }
  | { ok: false; line: number; reason: string };

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
 */
export function repairCheckpointFile(file: string): boolean {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return false;
  }
  const r = readCheckpointLog(buf.toString('utf8'));
  if (!r.ok || !r.tornTail) return false;
  // the good records are the lines before the torn one: cut after the last good line's newline
  let end = buf.length;
  if (buf.length && buf[buf.length - 1] === 0x0a) end = buf.length - 1;
  const cut = buf.lastIndexOf(0x0a, end - 1) + 1;
  truncateSync(file, cut);
  return true;
}

export class CheckpointLogWriter<R> {
  private fd: number | null;
  /** appends not yet flushed to the disk */
  private dirty = false;
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

  /** Writes the record now (one write, whole); a background flush follows. Throws when the disk refuses. */
  append(record: R): void {
    if (this.fd === null) return;
    const buf = Buffer.from(checkpointLine(record, this.mask));
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    this.appended++;
    this.bytes += buf.length;
    this.dirty = true;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushing || this.fd === null) return;
    const fd = this.fd;
    this.dirty = false;
    this.flushing = new Promise<void>((resolve) =>
      fdatasync(fd, (err) => {
        if (err) this.failure = err;
        this.flushing = null;
        resolve();
        // appends that came while this flush ran get the next one
        if (this.dirty) this.scheduleFlush();
      }),
    );
  }

  /** Resolves once every record appended so far is on the disk; rejects when a flush failed. */
  async durable(): Promise<void> {
    while (this.flushing || (this.dirty && this.fd !== null)) {
      if (!this.flushing) this.scheduleFlush();
      await this.flushing;
    }
    if (this.failure) throw this.failure;
  }

  /** Flushes what is left and closes the file (after a flush in flight: its descriptor must stay open until then). */
  async close(): Promise<void> {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    await this.flushing;
    try {
      if (this.dirty) fdatasyncSync(fd);
    } catch {
      // the records are written; a filesystem that refuses to flush does not undo them
    }
    closeSync(fd);
  }
}
