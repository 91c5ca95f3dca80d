/**
 * The run's feedback data, shared by the tools. Loading streams the CSV once: each row goes to
 * runtime/evidence_index.json on disk and into a tally (a few numbers a row); no row stays in
 * memory. Pages, quotes and the analysis read the rows back from the index (the analysis in one
 * or two passes, see FeedbackAnalyser), so memory follows the analysis, not the file.
 */
import { stat } from 'node:fs/promises';
import type { WorkspaceAccess } from '../../runtime/agent.js';
import { resolveInputFile } from '../shared/read-input-file.js';
import { contentTokens } from '../shared/tokenize.js';
import { corpusSampleIndices, detectCorpusLanguage, type CorpusLanguage } from '../shared/text-language.js';
import type { DetectedEncoding } from '../shared/decode-text.js';
import type { FeedbackStats } from './analysis/analyse-feedback.js';
import { analyseFeedback } from './analysis/analyse-feedback.js';
import { FeedbackAnalyser } from './analysis/feedback-analyser.js';
import { inSegment, segmentColumns, type GoalSegment, type SegmentColumn } from './goal-segment.js';
import { streamFeedbackCsv, type RowSink, type StreamedFeedback } from './analysis/feedback-csv-stream.js';
import type { FeedbackRow } from './analysis/feedback-row.js';
import { FeedbackTally } from './analysis/feedback-tally.js';
import { evidenceIndexPath, rememberIndexRows } from './evidence-index.js';
import {
  EvidenceIndexWriter,
  findEntries,
  forEachEntry,
  readEntries,
  readEntriesAt,
  StaleIndexError,
  type EvidenceIndexHandle,
} from './evidence-index-file.js';

export interface LoadedFeedback {
  csvPath: string;
  encoding: DetectedEncoding;
  /** what the reader learnt about the file; `rows` is the number of rows analysed */
  facts: StreamedFeedback;
  /** the rows, on disk */
  index: EvidenceIndexHandle;
  /** the same rows in memory when the file is small (then nothing is read back from the index) */
  memory: FeedbackRow[] | null;
  tally: FeedbackTally;
  /** the language the rows are written in: stop words, stemmer and sentiment lexicon follow it */
  language: CorpusLanguage;
}

export type LoadOutcome = { ok: true; value: LoadedFeedback } | { ok: false; error: string; hint: string };

/** Progress of a long step, for the tool's reporter. */
export type ProgressFn = (stage: string, current: number, total: number, message: string) => void;

/** Rows the analysis cited, kept for quoting them without a read; bounded. */
const CITED_CACHE_MAX = 2_000;
const PROGRESS_EVERY = 10_000;

/**
 * A small file keeps its rows in memory too: reading 10,000 rows back from the index (a JSON.parse
 * each) cost more than the runtime's whole share of the run. Larger files stay on disk only, decided
 * from the file's size before the read: rows held until a limit is passed and then dropped leave the
 * heap grown for nothing (a 100,000-row file's peak RSS was 208 MB so, 183 MB without).
 */
export interface MemoryLimits {
  /** rows kept at most (0: always read them back from the index) */
  rows: number;
  /** files larger than this keep none */
  fileBytes: number;
}
export const MEMORY_LIMITS: MemoryLimits = { rows: 50_000, fileBytes: 4 * 1024 * 1024 };
const MEMORY_TEXT_CHARS = 8 * 1024 * 1024;

class LoadSink implements RowSink {
  readonly tally = new FeedbackTally();
  memory: FeedbackRow[] | null;
  private textChars = 0;
  constructor(
    readonly writer: EvidenceIndexWriter,
    private readonly memoryRows: number,
  ) {
    this.memory = memoryRows > 0 ? [] : null;
  }
  add(row: FeedbackRow): void | Promise<void> {
    this.tally.add(row);
    if (this.memory) {
      this.textChars += row.text.length;
      if (this.memory.length >= this.memoryRows || this.textChars > MEMORY_TEXT_CHARS) this.memory = null;
      else this.memory.push(row);
    }
    return this.writer.add(row);
  }
  abort(): Promise<void> {
    return this.writer.abort();
  }
}

export class FeedbackDataset {
  private loads = new Map<string, Promise<LoadOutcome>>();
  /** per load, per segment (`''`: every row) */
  private stats = new Map<LoadedFeedback, Map<string, Promise<FeedbackStats>>>();
  private cited = new Map<string, FeedbackRow>();

  constructor(
    private readonly ws: WorkspaceAccess,
    readonly defaultPath: string,
    private readonly maxRows: number | undefined,
    private readonly productName?: string,
    private readonly memoryLimits: MemoryLimits = MEMORY_LIMITS,
  ) {}

  load(path: string = this.defaultPath): Promise<LoadOutcome> {
    let p = this.loads.get(path);
    if (!p) {
      p = this.doLoad(path);
      this.loads.set(path, p);
      void p.then((r) => {
        // a failed read may succeed later (e.g. the file appears); do not cache failures
        if (!r.ok) this.loads.delete(path);
        // one index on disk: another file's load replaced it, so that file loads again when asked
        else for (const other of this.loads.keys()) if (other !== path) this.loads.delete(other);
      });
    }
    return p;
  }

  private async doLoad(path: string): Promise<LoadOutcome> {
    let file: string;
    try {
      file = await resolveInputFile(this.ws, path);
    } catch (e) {
      return {
        ok: false,
        error: `cannot read ${JSON.stringify(path)}: ${(e as Error).message}`,
        hint: 'the CSV must be the run input csv_path (copied into input/)',
      };
    }
    let streamed;
    try {
      const memoryRows = (await stat(file)).size > this.memoryLimits.fileBytes ? 0 : this.memoryLimits.rows;
      streamed = await streamFeedbackCsv(file, {
        maxRows: this.maxRows,
        begin: async ({ encoding, plan }) =>
          new LoadSink(
            await EvidenceIndexWriter.create(evidenceIndexPath(this.ws), {
              source: path,
              encoding,
              id_source: plan.idCol >= 0 ? 'column' : 'generated',
              id_column: plan.idCol >= 0 ? plan.columns[plan.idCol] : null,
              text_column: plan.columns[plan.textCol],
            }),
            memoryRows,
          ),
      });
    } catch (e) {
      return {
        ok: false,
        error: `cannot read ${JSON.stringify(path)}: ${(e as Error).message}`,
        hint: 'the CSV must be the run input csv_path (copied into input/)',
      };
    }
    // parse errors name the file's problem and its fix themselves
    if (!streamed.ok) return { ok: false, error: `${path}: ${streamed.error}`, hint: '' };
    const facts = streamed.value;
    const index = await streamed.sink.writer.finish(facts.totalDataRows);
    this.cited.clear();
    const memory = streamed.sink.memory;
    // a file kept in memory too: its every row, so the evidence checks read none of the index back
    if (memory)
      rememberIndexRows(
        index,
        memory.map((r) => [r.feedback_id, r.text]),
        true,
      );
    const sample = await rowsAt({ index, memory }, corpusSampleIndices(index.entries));
    const language = detectCorpusLanguage([...sample.values()].map((r) => r.text));
    return { ok: true, value: { csvPath: path, encoding: facts.encoding, facts, index, memory, tally: streamed.sink.tally, language } };
  }

  /** Runs `f` on the load; when another file's load replaced the index meanwhile, loads again and retries once. */
  private async withIndex<T>(loaded: LoadedFeedback, f: (l: LoadedFeedback) => Promise<T>): Promise<T> {
    try {
      return await f(loaded);
    } catch (e) {
      if (!(e instanceof StaleIndexError)) throw e;
      const again = await this.load(loaded.csvPath);
      if (!again.ok) throw new Error(again.error);
      return f(again.value);
    }
  }

  /** `limit` rows from row `offset` (0-based among the analysed rows). */
  rows(loaded: LoadedFeedback, offset: number, limit: number): Promise<FeedbackRow[]> {
    return this.withIndex(loaded, async (l) => (l.memory ? l.memory.slice(offset, offset + limit) : readEntries(l.index, offset, limit)));
  }

  /** The rows with these ids (those not in the file are absent). */
  async byIds(loaded: LoadedFeedback, ids: string[]): Promise<Map<string, FeedbackRow>> {
    const out = new Map<string, FeedbackRow>();
    const missing: string[] = [];
    for (const id of ids) {
      const r = this.cited.get(id);
      if (r) out.set(id, r);
      else missing.push(id);
    }
    if (missing.length) for (const [id, r] of await this.withIndex(loaded, (l) => rowsWithIds(l, missing))) out.set(id, r);
    return out;
  }

  /** The `limit` rows carrying most of these stems (ties: earlier rows first), in one pass over the index. */
  search(loaded: LoadedFeedback, stems: string[], limit: number): Promise<FeedbackRow[]> {
    const lang = loaded.language.code;
    const want = new Set(stems);
    return this.withIndex(loaded, async (l) => {
      // the best `limit` so far, best first; a new row enters only with strictly more hits than the last
      const best: Array<{ r: FeedbackRow; hits: number }> = [];
      await eachRow(l, (r) => {
        let hits = 0;
        for (const t of contentTokens(r.text, lang)) if (want.has(t.stem)) hits++;
        if (hits === 0 || (best.length >= limit && hits <= best[best.length - 1].hits)) return;
        let at = best.length;
        while (at > 0 && best[at - 1].hits < hits) at--;
        best.splice(at, 0, { r, hits });
        if (best.length > limit) best.pop();
      });
      return best.map((x) => x.r);
    });
  }

  /** The file's segment columns (platform, plan…) with their values: what a goal may narrow to. */
  segmentColumns(loaded: LoadedFeedback): SegmentColumn[] {
    return segmentColumns(loaded.tally, loaded.facts.channelColumn);
  }

  /** The statistics over every analysed row (or a segment's), computed once per load and segment. */
  analyse(loaded: LoadedFeedback, progress?: ProgressFn, segment?: GoalSegment): Promise<FeedbackStats> {
    const key = segment ? JSON.stringify(segment) : '';
    let byKey = this.stats.get(loaded);
    if (!byKey) this.stats.set(loaded, (byKey = new Map()));
    let s = byKey.get(key);
    if (!s) {
      s = this.withIndex(loaded, (l) => (segment ? this.analyseSegment(l, segment) : this.doAnalyse(l, progress)));
      byKey.set(key, s);
      const cache = byKey;
      void s.catch(() => cache.delete(key));
    }
    return s;
  }

  /** A segment's rows, analysed whole (in memory: a segment is a part of the file). */
  private async analyseSegment(loaded: LoadedFeedback, segment: GoalSegment): Promise<FeedbackStats> {
    const rows: FeedbackRow[] = [];
    await eachRow(loaded, (r) => {
      if (inSegment(r, segment, loaded.facts.channelColumn)) rows.push(r);
    });
    if (rows.length === 0) throw new Error(`no row has ${segment.column} ${segment.values.join(' or ')}`);
    const stats = analyseFeedback(rows, { language: loaded.language, ...(this.productName ? { productName: this.productName } : {}) });
    for (const r of rows) this.cited.set(r.feedback_id, r);
    if (this.cited.size > CITED_CACHE_MAX) this.cited.clear();
    if (!loaded.memory)
      rememberIndexRows(
        loaded.index,
        rows.map((r) => [r.feedback_id, r.text]),
        false,
      );
    return { ...stats, segment: { ...segment, rows: rows.length, of_rows: loaded.facts.rows } };
  }

  private async doAnalyse(loaded: LoadedFeedback, progress?: ProgressFn): Promise<FeedbackStats> {
    const a = new FeedbackAnalyser(loaded.tally, { language: loaded.language, productName: this.productName });
    const n = a.n;
    /** counts the rows a pass handles and reports every PROGRESS_EVERY of them */
    const counter = (stage: string, what: string, total: number): (() => void) => {
      let done = 0;
      return () => {
        if (progress && ++done % PROGRESS_EVERY === 0) progress(stage, done, total, `${what}: ${done} of ${total} rows`);
      };
    };
    const fitted = counter('themes', a.sampled ? 'fitting themes on a sample' : 'sentiment and themes', a.sampled ? (a.themeSample?.rows ?? n) : n);
    await eachRow(
      loaded,
      (r, i) => {
        a.fitRow(i, r.text);
        fitted();
      },
      (i) => a.fits(i),
    );
    a.fit();
    if (a.sampled) {
      const placed = counter('assign', 'sentiment and nearest theme', n);
      await eachRow(loaded, (r, i) => {
        a.placeRow(i, r.text);
        placed();
      });
    }
    const cited = await rowsAt(loaded, a.citedRows());
    if (this.cited.size + cited.size > CITED_CACHE_MAX) this.cited.clear();
    for (const r of cited.values()) this.cited.set(r.feedback_id, r);
    // the rows the artifacts will cite: their checks need not look for them in the index
    if (!loaded.memory)
      rememberIndexRows(
        loaded.index,
        [...cited.values()].map((r) => [r.feedback_id, r.text]),
        false,
      );
    return a.finish((i) => (cited.get(i) as FeedbackRow).feedback_id);
  }
}

type RowSource = Pick<LoadedFeedback, 'index' | 'memory'>;

/** Every row (those `want` takes), from memory when the load kept them, else from the index file. */
async function eachRow(l: RowSource, visit: (row: FeedbackRow, index: number) => void, want?: (index: number) => boolean): Promise<void> {
  if (!l.memory) return forEachEntry(l.index, visit, want);
  l.memory.forEach((r, i) => {
    if (!want || want(i)) visit(r, i);
  });
}

async function rowsAt(l: RowSource, positions: number[]): Promise<Map<number, FeedbackRow>> {
  if (!l.memory) return readEntriesAt(l.index, positions);
  const out = new Map<number, FeedbackRow>();
  for (const i of positions) if (l.memory[i]) out.set(i, l.memory[i]);
  return out;
}

async function rowsWithIds(l: RowSource, ids: string[]): Promise<Map<string, FeedbackRow>> {
  if (!l.memory) return findEntries(l.index.path, ids, l.index.ino);
  const want = new Set(ids);
  const out = new Map<string, FeedbackRow>();
  for (const r of l.memory) if (want.has(r.feedback_id) && !out.has(r.feedback_id)) out.set(r.feedback_id, r);
  return out;
}
