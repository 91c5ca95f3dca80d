/**
 * runtime/evidence_index.json on disk, one entry per line: written as the CSV streams (atomic:
 * a temporary file renamed at the end), read back a line at a time. It is still one JSON
 * document (`JSON.parse` reads it whole), laid out so that no reader has to:
 *
 *   {"version":1,"source":…,"encoding":…,"id_source":…,"id_column":…,"text_column":…,"entries":[
 *   {"feedback_id":"FB-1","row":1,"text":"…","rating":1,"channel":"email"},
 *   …
 *   {"feedback_id":"FB-9","row":9,"text":"…"}
 *   ],"total_rows":9,"indexed_rows":9}
 *
 * Entries carry the normalised row (rating, channel, date, extra only when present), so pages of
 * rows are read from here too. The writer notes where every 1,024th entry starts, so a page or a
 * named row is a short read, not a scan.
 */
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import type { FeedbackRow, IdSource } from './analysis/feedback-row.js';

export const CHECKPOINT_EVERY = 1024;
// below V8's large-object size, so a chunk's string dies young (see feedback-csv-stream.ts)
const WRITE_CHUNK = 48 * 1024;
const READ_CHUNK = 256 * 1024;
const ENTRY_PREFIX = Buffer.from('{"feedback_id":');
const COMMA = 0x2c;
const NEWLINE = 0x0a;

export interface EvidenceIndexMeta {
  source: string;
  encoding: string;
  id_source: IdSource;
  id_column: string | null;
  text_column: string;
}

/** A finished index file, as its writer left it. */
export interface EvidenceIndexHandle {
  path: string;
  /** the file's inode: a later index written over it (another CSV read) is not this one */
  ino: number;
  /** its size and mtime as written: with the inode, what an unchanged file still has */
  size: number;
  mtimeMs: number;
  entries: number;
  /** byte offset of entry k × CHECKPOINT_EVERY */
  checkpoints: number[];
}

/** The index file was replaced since this handle was made (read_feedback_csv read another file). */
export class StaleIndexError extends Error {
  constructor(path: string) {
    super(`${path} was replaced by another read_feedback_csv call`);
  }
}

/** The entry line of a row: {feedback_id, row, text, rating?, channel?, date?, extra?}, absent fields left out. */
export function entryJson(r: FeedbackRow): string {
  return JSON.stringify({
    feedback_id: r.feedback_id,
    row: r.row,
    text: r.text,
    ...(r.rating !== null ? { rating: r.rating } : {}),
    ...(r.channel !== null ? { channel: r.channel } : {}),
    ...(r.date !== null ? { date: r.date } : {}),
    ...(Object.keys(r.extra).length ? { extra: r.extra } : {}),
  });
}

/** An entry line back to the row it was written from. */
function rowOf(e: {
  feedback_id: string;
  row: number;
  text: string;
  rating?: number;
  channel?: string;
  date?: string;
  extra?: Record<string, string>;
}): FeedbackRow {
  return {
    feedback_id: e.feedback_id,
    row: e.row,
    text: e.text,
    rating: e.rating ?? null,
    channel: e.channel ?? null,
    date: e.date ?? null,
    extra: e.extra ?? {},
  };
}

let tmpCounter = 0;

export class EvidenceIndexWriter {
  private pending: string[] = [];
  private pendingChars = 0;
  /** bytes handed to the file so far (the pending strings are measured only when a chunk goes) */
  private flushedBytes = 0;
  private count = 0;
  private readonly checkpoints: number[] = [];

  private constructor(
    private readonly fh: FileHandle,
    private readonly tmp: string,
    private readonly target: string,
  ) {}

  /** `target` is the index's path (runtime/evidence_index.json of the run). */
  static async create(target: string, meta: EvidenceIndexMeta): Promise<EvidenceIndexWriter> {
    const tmp = `${target}.tmp-${process.pid}-${++tmpCounter}`;
    const w = new EvidenceIndexWriter(await open(tmp, 'w'), tmp, target);
    const head = JSON.stringify({ version: 1, ...meta });
    w.put(`${head.slice(0, -1)},"entries":[\n`);
    return w;
  }

  private put(s: string): void {
    this.pending.push(s);
    this.pendingChars += s.length;
  }

  /** The byte offset the next string put will start at. */
  private offset(): number {
    let b = this.flushedBytes;
    for (const s of this.pending) b += Buffer.byteLength(s);
    return b;
  }

  /**
   * The chunk on its way to disk while the next one fills: the reader waits for a write only when
   * the chunk after it is full too (a run of 10,000 rows spent ~10 ms idle awaiting 48 KB writes).
   * Writes stay in order; a failed one is thrown by the next flush, or by finish.
   */
  private writing: Promise<void> | null = null;

  private async flush(): Promise<void> {
    const data = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    this.flushedBytes += Buffer.byteLength(data);
    if (this.writing) await this.writing;
    const w = this.fh.write(data).then(() => undefined);
    w.catch(() => undefined); // awaited by the next flush or by finish; until then not "unhandled"
    this.writing = w;
  }

  private async settled(): Promise<void> {
    const w = this.writing;
    this.writing = null;
    if (w) await w;
  }

  add(row: FeedbackRow): void | Promise<void> {
    if (this.count > 0) this.put(',\n');
    if (this.count % CHECKPOINT_EVERY === 0) this.checkpoints.push(this.offset());
    this.put(entryJson(row));
    this.count++;
    if (this.pendingChars >= WRITE_CHUNK) return this.flush();
  }

  async finish(totalRows: number): Promise<EvidenceIndexHandle> {
    this.put(`\n],"total_rows":${totalRows},"indexed_rows":${this.count}}\n`);
    await this.flush();
    await this.settled();
    await this.fh.close();
    await rename(this.tmp, this.target);
    const st = await stat(this.target);
    return { path: this.target, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, entries: this.count, checkpoints: this.checkpoints };
  }

  async abort(): Promise<void> {
    await this.settled().catch(() => {});
    await this.fh.close().catch(() => {});
    await rm(this.tmp, { force: true });
  }
}

/**
 * Every line of the file from byte `from`, as raw bytes [start, end) of `buf` (no line break);
 * `visit` returns false to stop.
 */
async function scanLines(path: string, from: number, visit: (buf: Buffer, start: number, end: number) => boolean, ino?: number): Promise<void> {
  const fh = await open(path, 'r');
  try {
    if (ino !== undefined && (await fh.stat()).ino !== ino) throw new StaleIndexError(path);
    let buf = Buffer.allocUnsafe(READ_CHUNK);
    let have = 0;
    let pos = from;
    for (;;) {
      if (have === buf.length) {
        // a line longer than the buffer: grow it
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, have, buf.length - have, pos);
      pos += bytesRead;
      const end = have + bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE, start); nl >= 0 && nl < end; nl = buf.indexOf(NEWLINE, start)) {
        if (!visit(buf, start, nl)) return;
        start = nl + 1;
      }
      if (bytesRead === 0) {
        if (start < end) visit(buf, start, end);
        return;
      }
      buf.copy(buf, 0, start, end);
      have = end - start;
    }
  } finally {
    await fh.close();
  }
}

function isEntry(buf: Buffer, start: number, end: number): boolean {
  return end - start > ENTRY_PREFIX.length && buf.compare(ENTRY_PREFIX, 0, ENTRY_PREFIX.length, start, start + ENTRY_PREFIX.length) === 0;
}

function parseEntry(buf: Buffer, start: number, end: number): FeedbackRow {
  return rowOf(JSON.parse(buf.toString('utf8', start, buf[end - 1] === COMMA ? end - 1 : end)));
}

/** The entry's feedback_id as written (JSON, quotes included), read without parsing the line. */
function idJsonOf(buf: Buffer, start: number, end: number): string | null {
  let i = start + ENTRY_PREFIX.length;
  if (buf[i] !== 0x22) return null;
  for (i++; i < end; i++) {
    if (buf[i] === 0x5c) i++;
    else if (buf[i] === 0x22) return buf.toString('utf8', start + ENTRY_PREFIX.length, i + 1);
  }
  return null;
}

/** Whether the file is laid out one entry per line (this writer's), read from its first line. */
export async function isLineIndex(path: string): Promise<boolean> {
  let first = '';
  await scanLines(path, 0, (buf, s, e) => {
    first = buf.toString('utf8', s, Math.min(e, s + 200));
    return false;
  });
  return first.startsWith('{"version":1,');
}

/** Every entry in order; `want` (by position) skips parsing the others. */
export async function forEachEntry(h: EvidenceIndexHandle, visit: (row: FeedbackRow, index: number) => void, want?: (index: number) => boolean): Promise<void> {
  let i = 0;
  await scanLines(
    h.path,
    h.checkpoints[0] ?? 0,
    (buf, s, e) => {
      if (!isEntry(buf, s, e)) return true;
      if (!want || want(i)) visit(parseEntry(buf, s, e), i);
      i++;
      return true;
    },
    h.ino,
  );
}

/** `count` entries from entry `first` on (fewer at the end). */
export async function readEntries(h: EvidenceIndexHandle, first: number, count: number): Promise<FeedbackRow[]> {
  const out: FeedbackRow[] = [];
  if (count <= 0 || first >= h.entries) return out;
  const k = Math.floor(first / CHECKPOINT_EVERY);
  let i = k * CHECKPOINT_EVERY;
  await scanLines(
    h.path,
    h.checkpoints[k],
    (buf, s, e) => {
      if (!isEntry(buf, s, e)) return true;
      if (i >= first) out.push(parseEntry(buf, s, e));
      i++;
      return out.length < count;
    },
    h.ino,
  );
  return out;
}

/** The entries at these positions (any order, repeats allowed), by position: one pass that parses only those lines. */
export async function readEntriesAt(h: EvidenceIndexHandle, positions: number[]): Promise<Map<number, FeedbackRow>> {
  const out = new Map<number, FeedbackRow>();
  const wanted = [...new Set(positions.filter((p) => p >= 0 && p < h.entries))].sort((a, b) => a - b);
  if (wanted.length === 0) return out;
  const k = Math.floor(wanted[0] / CHECKPOINT_EVERY);
  let i = k * CHECKPOINT_EVERY;
  let w = 0;
  await scanLines(
    h.path,
    h.checkpoints[k],
    (buf, s, e) => {
      if (!isEntry(buf, s, e)) return true;
      if (i === wanted[w]) {
        out.set(i, parseEntry(buf, s, e));
        w++;
      }
      i++;
      return w < wanted.length;
    },
    h.ino,
  );
  return out;
}

/** The entries with these feedback_ids: one pass over the file that parses only the lines asked for. */
export async function findEntries(path: string, ids: Iterable<string>, ino?: number): Promise<Map<string, FeedbackRow>> {
  const wanted = new Set([...ids].map((id) => JSON.stringify(id)));
  const out = new Map<string, FeedbackRow>();
  if (wanted.size === 0) return out;
  await scanLines(
    path,
    0,
    (buf, s, e) => {
      if (!isEntry(buf, s, e)) return true;
      const id = idJsonOf(buf, s, e);
      if (id !== null && wanted.has(id)) {
        const row = parseEntry(buf, s, e);
        if (!out.has(row.feedback_id)) out.set(row.feedback_id, row);
      }
      return out.size < wanted.size;
    },
    ino,
  );
  return out;
}
