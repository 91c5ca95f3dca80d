/**
 * A feedback CSV read as a stream: bytes → text (encoding decided from the first bytes, as
 * `decodeText` does) → csv-parse's streaming parser → normalised rows, handed one at a time to a
 * sink (the evidence index on disk, the tally). Only the first rows are held back, until the
 * columns are decided; the same rows, facts and errors as `parseFeedbackCsv` on the whole text.
 *
 * Two cases read the file again from the start: a file that turns out not to be UTF-8 (it is then
 * read as Windows-1252, as `decodeText` would have chosen), and a text-header column empty in
 * all of the first rows (its first value further down decides whether it is the text column).
 */
import { createReadStream } from 'node:fs';
import { CsvError, parse, type Parser } from 'csv-parse';
import { chunkDecoder, NotUtf8Error, type ChunkDecoder, type DetectedEncoding } from '../../shared/decode-text.js';
import type { FeedbackRow } from './feedback-row.js';
import { columnOf, headerNames, planColumns, RowNormaliser, type ColumnPlan, type FeedbackFileFacts } from './feedback-row-normaliser.js';
import { headerKey, ID_ALIASES } from './header-aliases.js';
import { CSV_OPTIONS, detectDelimiter } from './parse-feedback-csv.js';
import { COLUMN_SAMPLE_ROWS, textAliasColumnsWithoutSample } from './text-column.js';

export interface FeedbackStreamStart {
  encoding: DetectedEncoding;
  plan: ColumnPlan;
}

/** Where the rows go. `begin` may be called again after an `abort` (the file is read anew). */
export interface RowSink {
  add(row: FeedbackRow): void | Promise<void>;
  abort(): Promise<void>;
}

export interface StreamedFeedback extends FeedbackFileFacts {
  encoding: DetectedEncoding;
  /** rows handed to the sink */
  rows: number;
}

export type StreamOutcome<S> = { ok: true; value: StreamedFeedback; sink: S } | { ok: false; error: string };

export interface StreamOptions<S extends RowSink> {
  maxRows?: number;
  begin(start: FeedbackStreamStart): S | Promise<S>;
}

/**
 * Small reads: each chunk's Buffer and decoded string are garbage after one step, and below V8's
 * large-object size they die young (a scavenge), instead of piling up in old space until a full GC.
 */
const READ_CHUNK = 64 * 1024;

/** Resolves when the parser wants more input again, or is gone. */
function drained(parser: Parser): Promise<void> {
  return new Promise<void>((ok) => {
    const done = (): void => {
      parser.off('drain', done);
      parser.off('close', done);
      ok();
    };
    parser.on('drain', done);
    parser.on('close', done);
  });
}

/** Where the header line ends (a line break outside quotes), or -1 when `text` does not hold all of it yet. */
function headerLineEnd(text: string): number {
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (ch === '\n' || ch === '\r')) return i;
  }
  return -1;
}

interface ReadResult {
  encoding: DetectedEncoding;
  /** anything but whitespace in the file */
  sawText: boolean;
}

/**
 * One read of the file: every record to `visit` (false stops the read). Throws NotUtf8Error,
 * csv-parse's CsvError, or the file's read error.
 */
export async function readRecords(
  file: string,
  fallback: boolean,
  onEncoding: (e: DetectedEncoding) => void,
  visit: (rec: string[]) => boolean | Promise<boolean>,
): Promise<ReadResult> {
  const stream = createReadStream(file, { highWaterMark: READ_CHUNK });
  let dec: ChunkDecoder | null = null;
  let sawText = false;
  async function* texts(): AsyncGenerator<string> {
    let first = true;
    for await (const buf of stream as AsyncIterable<Buffer>) {
      let bytes: Uint8Array = buf;
      if (!dec) {
        dec = chunkDecoder(buf, { fallback });
        onEncoding(dec.encoding);
        bytes = buf.subarray(dec.skip);
      }
      let t = dec.decode(bytes);
      if (first && t !== '') {
        t = t.replace(/^\uFEFF/, '');
        first = false;
      }
      if (!sawText && /\S/.test(t)) sawText = true;
      if (t !== '') yield t;
    }
    const rest = dec ? (dec as ChunkDecoder).end() : '';
    if (rest !== '') {
      if (!sawText && /\S/.test(rest)) sawText = true;
      yield rest;
    }
  }
  const chunks = texts();
  try {
    // the delimiter is the one the header line uses most
    let head = '';
    let ended = false;
    while (headerLineEnd(head) < 0) {
      const r = await chunks.next();
      if (r.done) {
        ended = true;
        break;
      }
      head += r.value;
    }
    const parser: Parser = parse({ delimiter: detectDelimiter(head), ...CSV_OPTIONS });
    parser.on('error', () => {}); // surfaced by the iterator below
    const feed = (async () => {
      const write = async (t: string): Promise<boolean> => {
        if (parser.destroyed) return false;
        if (!parser.write(t)) await drained(parser);
        return !parser.destroyed;
      };
      if (head !== '' && !(await write(head))) return;
      if (!ended) for await (const t of chunks) if (!(await write(t))) return;
      parser.end();
    })().catch((e: unknown) => parser.destroy(e as Error));
    try {
      for await (const rec of parser as AsyncIterable<string[]>) {
        const r: boolean | Promise<boolean> = visit(rec);
        if (r === false || (r instanceof Promise && (await r) === false)) break;
      }
    } finally {
      parser.destroy();
      await feed;
    }
  } finally {
    await chunks.return(undefined);
    stream.destroy();
  }
  return { encoding: (dec as ChunkDecoder | null)?.encoding ?? (fallback ? 'windows-1252' : 'utf-8'), sawText };
}

/** Streams the file's rows into the sink `begin` makes; see the module comment. */
export async function streamFeedbackCsv<S extends RowSink>(file: string, opts: StreamOptions<S>): Promise<StreamOutcome<S>> {
  let fallback = false;
  let plan: ColumnPlan | null = null;
  for (;;) {
    try {
      const r: Attempt<S> = await attempt(file, fallback, plan, opts);
      if ('restartWith' in r) plan = r.restartWith;
      else return r;
    } catch (e) {
      if (!(e instanceof NotUtf8Error) || fallback) throw e;
      // decided on text read as UTF-8: decide again on the Windows-1252 text
      fallback = true;
      plan = null;
    }
  }
}

type Attempt<S> = StreamOutcome<S> | { restartWith: ColumnPlan };

async function attempt<S extends RowSink>(file: string, fallback: boolean, known: ColumnPlan | null, opts: StreamOptions<S>): Promise<Attempt<S>> {
  // mutable state the record callback and the end share (an object: TypeScript does not narrow it)
  const st = {
    header: null as string[] | null,
    /** the first data rows, until the columns are decided */
    buffered: [] as string[][],
    total: 0,
    phase: 'buffer' as 'buffer' | 'rows' | 'look',
    sink: null as S | null,
    normaliser: null as RowNormaliser | null,
    encoding: (fallback ? 'windows-1252' : 'utf-8') as DetectedEncoding,
    // look phase: the first value of each column the first rows left empty
    firsts: new Map<number, string>(),
    wanted: [] as number[],
    planError: null as string | null,
  };
  const push = (rec: string[], i: number): void | Promise<void> => {
    const row = (st.normaliser as RowNormaliser).push(rec, i);
    return row ? (st.sink as S).add(row) : undefined;
  };
  const begin = async (plan: ColumnPlan): Promise<boolean> => {
    st.sink = await opts.begin({ encoding: st.encoding, plan });
    st.normaliser = new RowNormaliser(plan, opts.maxRows);
    st.phase = 'rows';
    for (let i = 0; i < st.buffered.length; i++) await push(st.buffered[i], i);
    st.buffered = [];
    return true;
  };
  /** The first rows plus one row per later first value: what `chooseTextColumn` would see of the whole file. */
  const augmented = (): string[][] => [
    ...st.buffered,
    ...[...st.firsts].map(([c, v]) => {
      const r: string[] = [];
      r[c] = v;
      return r;
    }),
  ];
  const startLooking = (): true => {
    const cols = (st.header as string[]).map((_, c) => c);
    st.wanted = cols.filter((c) => st.buffered.every((r) => (r[c] ?? '').trim() === ''));
    st.phase = 'look';
    return true;
  };
  const visit = (rec: string[]): boolean | Promise<boolean> => {
    if (!st.header) {
      st.header = headerNames(rec);
      return known ? begin(known) : true;
    }
    const i = st.total++;
    if (st.phase === 'rows') {
      const p = push(rec, i);
      return p ? p.then(() => true) : true;
    }
    if (st.phase === 'look') {
      for (const c of st.wanted) if (!st.firsts.has(c) && (rec[c] ?? '').trim() !== '') st.firsts.set(c, rec[c]);
      // a plan to restart with needs nothing more; a failed plan reads on (a parse error later wins, as it would have)
      return st.planError !== null || st.firsts.size < st.wanted.length;
    }
    st.buffered.push(rec);
    if (st.buffered.length < COLUMN_SAMPLE_ROWS) return true;
    // more rows may follow: decide now, unless a text-header column is empty in all the first rows
    const keys = st.header.map(headerKey);
    const idCol = columnOf(keys, ID_ALIASES);
    if (textAliasColumnsWithoutSample(keys, st.buffered, idCol >= 0 ? [idCol] : []).length > 0) return startLooking();
    const planned = planColumns(st.header, st.buffered);
    if (planned.ok) return begin(planned.plan);
    st.planError = planned.error;
    return startLooking();
  };

  let sawText: boolean;
  try {
    ({ sawText } = await readRecords(file, fallback, (e) => (st.encoding = e), visit));
  } catch (e) {
    await st.sink?.abort();
    if (e instanceof CsvError) return { ok: false, error: `the CSV could not be parsed: ${e.message}` };
    throw e;
  }
  const fail = async (error: string): Promise<StreamOutcome<S>> => {
    await st.sink?.abort();
    return { ok: false, error };
  };
  if (!sawText) return fail('the CSV file is empty');
  if (!st.header) return fail('the CSV file has no rows');
  if (st.total === 0) return fail(`the CSV has a header (${st.header.join(', ')}) but no data rows`);
  if (st.phase !== 'rows') {
    const planned = planColumns(st.header, augmented());
    if (!planned.ok) return fail(planned.error);
    // a short file was buffered whole: its rows come from the buffer; else read again with the plan
    if (st.phase === 'look') return { restartWith: planned.plan };
    await begin(planned.plan);
  }
  const normaliser = st.normaliser as RowNormaliser;
  const done = normaliser.finish(st.total);
  if (!done.ok) return fail(done.error);
  return { ok: true, value: { ...done.value, encoding: st.encoding, rows: normaliser.rows }, sink: st.sink as S };
}
