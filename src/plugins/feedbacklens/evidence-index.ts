/** runtime/evidence_index.json: every row the run read, by feedback_id; the ground truth for evidence checks. */
import type { WorkspaceAccess } from '../../runtime/business-plugin.js';
import { readRuntimeJson } from '../shared/read-input-file.js';
import type { FeedbackRow, IdSource } from './analysis/feedback-row.js';

export const EVIDENCE_INDEX_FILE = 'evidence_index.json';

export interface EvidenceIndex {
  version: 1;
  source: string;
  encoding: string;
  id_source: IdSource;
  id_column: string | null;
  text_column: string;
  total_rows: number;
  indexed_rows: number;
  entries: Array<{ feedback_id: string; row: number; text: string }>;
}

export function buildEvidenceIndex(meta: Omit<EvidenceIndex, 'version' | 'entries' | 'indexed_rows'>, rows: FeedbackRow[]): EvidenceIndex {
  return {
    version: 1,
    ...meta,
    indexed_rows: rows.length,
    entries: rows.map((r) => ({ feedback_id: r.feedback_id, row: r.row, text: r.text })),
  };
}

/** id → text, or an error string naming what is wrong with the file. */
export async function loadEvidenceIndex(ws: WorkspaceAccess): Promise<Map<string, string> | string> {
  const v = await readRuntimeJson(ws, EVIDENCE_INDEX_FILE);
  if (v === null) return `runtime/${EVIDENCE_INDEX_FILE} is missing or not JSON (read_feedback_csv has not run successfully)`;
  const entries = (v as { entries?: unknown }).entries;
  if (!Array.isArray(entries)) return `runtime/${EVIDENCE_INDEX_FILE} has no "entries" array`;
  const map = new Map<string, string>();
  for (const e of entries) {
    if (e && typeof e === 'object' && typeof e.feedback_id === 'string' && typeof e.text === 'string') map.set(e.feedback_id, e.text);
  }
  return map;
}
