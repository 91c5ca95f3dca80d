/**
 * The run's feedback data, loaded once and shared by the tools: decoded, parsed, indexed
 * (runtime/evidence_index.json written on first load) and analysed on demand.
 */
import type { WorkspaceAccess } from '../../runtime/business-plugin.js';
import { readInputBytes } from '../shared/read-input-file.js';
import { analyseFeedback, type FeedbackStats } from './analysis/analyse-feedback.js';
import { decodeText, type DetectedEncoding } from '../shared/decode-text.js';
import { detectCorpusLanguage, type CorpusLanguage } from '../shared/text-language.js';
import type { FeedbackRow } from './analysis/feedback-row.js';
import { parseFeedbackCsv, type ParsedFeedback } from './analysis/parse-feedback-csv.js';
import { buildEvidenceIndex, EVIDENCE_INDEX_FILE } from './evidence-index.js';
import { HARD_ROW_LIMIT } from './input-schema.js';

export interface LoadedFeedback {
  csvPath: string;
  encoding: DetectedEncoding;
  parsed: ParsedFeedback;
  byId: Map<string, FeedbackRow>;
  /** the language the rows are written in: stop words, stemmer and sentiment lexicon follow it */
  language: CorpusLanguage;
}

export type LoadOutcome = { ok: true; value: LoadedFeedback } | { ok: false; error: string; hint: string };

export class FeedbackDataset {
  private loads = new Map<string, Promise<LoadOutcome>>();
  private stats = new Map<string, FeedbackStats>();

  constructor(
    private readonly ws: WorkspaceAccess,
    readonly defaultPath: string,
    private readonly maxRows: number | undefined,
    private readonly productName?: string,
  ) {}

  load(path: string = this.defaultPath): Promise<LoadOutcome> {
    let p = this.loads.get(path);
    if (!p) {
      p = this.doLoad(path);
      this.loads.set(path, p);
      // a failed read may succeed later (e.g. the file appears); do not cache failures
      void p.then((r) => {
        if (!r.ok) this.loads.delete(path);
      });
    }
    return p;
  }

  private async doLoad(path: string): Promise<LoadOutcome> {
    let bytes: Uint8Array;
    try {
      bytes = (await readInputBytes(this.ws, path)).bytes;
    } catch (e) {
      return { ok: false, error: `cannot read ${JSON.stringify(path)}: ${(e as Error).message}`, hint: 'the CSV must be the run input csv_path (copied into input/)' };
    }
    const { text, encoding } = decodeText(bytes);
    const parsed = parseFeedbackCsv(text, { maxRows: Math.min(this.maxRows ?? HARD_ROW_LIMIT, HARD_ROW_LIMIT) });
    // parse errors name the file's problem and its fix themselves
    if (!parsed.ok) return { ok: false, error: `${path}: ${parsed.error}`, hint: '' };
    const v = parsed.value;
    await this.ws.writeRuntimeJson(
      EVIDENCE_INDEX_FILE,
      buildEvidenceIndex(
        { source: path, encoding, id_source: v.idSource, id_column: v.idColumn, text_column: v.textColumn, total_rows: v.totalDataRows },
        v.rows,
      ),
    );
    const language = detectCorpusLanguage(v.rows.map((r) => r.text));
    return { ok: true, value: { csvPath: path, encoding, parsed: v, byId: new Map(v.rows.map((r) => [r.feedback_id, r])), language } };
  }

  analyse(loaded: LoadedFeedback): FeedbackStats {
    let s = this.stats.get(loaded.csvPath);
    if (!s) {
      s = analyseFeedback(loaded.parsed.rows, { productName: this.productName, language: loaded.language });
      this.stats.set(loaded.csvPath, s);
    }
    return s;
  }
}
