/**
 * runtime/evidence_index.json: every row the run read, by feedback_id; the ground truth for
 * evidence checks. It stays on disk (evidence-index-file.ts): a check reads the rows it cites.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspaceAccess } from '../../runtime/agent.js';
import { readRuntimeJson } from '../shared/read-input-file.js';
import type { IdSource } from './analysis/feedback-row.js';
import { findEntries, isLineIndex, StaleIndexError, type EvidenceIndexHandle } from './evidence-index-file.js';
import { EvidenceLookupMemo } from './evidence-lookup-memo.js';

export const EVIDENCE_INDEX_FILE = 'evidence_index.json';

/** The document's shape (ARTIFACTS.md); entries also carry rating, channel, date and extra when the row has them. */
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

/** Where a run's index is (runtime/ belongs to the runtime: tools read it, only read_feedback_csv writes it). */
export function evidenceIndexPath(ws: WorkspaceAccess): string {
  return join(ws.root, 'runtime', EVIDENCE_INDEX_FILE);
}

/** Shared by the write-time checks and the stop validators of every run in this process. */
const memo = new EvidenceLookupMemo();

/**
 * The index's writer (the run's FeedbackDataset) telling the lookups what the file it just finished
 * holds: `rows` (id, text), every row of it when `complete`.
 */
export function rememberIndexRows(index: EvidenceIndexHandle, rows: ReadonlyArray<[string, string]>, complete: boolean): void {
  memo.remember(index.path, index, rows, complete);
}

const MISSING = `runtime/${EVIDENCE_INDEX_FILE} is missing or not JSON (read_feedback_csv has not run successfully)`;

/**
 * id → text for the ids asked for (an id the index lacks is absent from the map), or an error
 * string naming what is wrong with the file. Reads one line per id asked for, not the index.
 */
export async function lookupEvidence(ws: WorkspaceAccess, ids: Iterable<string>): Promise<Map<string, string> | string> {
  const path = evidenceIndexPath(ws);
  let lines: boolean;
  try {
    lines = await isLineIndex(path);
  } catch {
    return MISSING;
  }
  if (lines) {
    const wanted = [...ids];
    // a file replaced between its stat and its scan (another read_feedback_csv) is looked at again
    for (let attempt = 0; ; attempt++) {
      try {
        const st = await stat(path);
        return await memo.lookup(path, st, wanted, async (unknown) => {
          const found = await findEntries(path, unknown, st.ino);
          return new Map([...found].map(([id, row]) => [id, row.text]));
        });
      } catch (e) {
        if (!(e instanceof StaleIndexError) || attempt > 0) return MISSING;
      }
    }
  }
  // an index written whole (by an earlier version, or by hand): small enough to parse
  const v = await readRuntimeJson(ws, EVIDENCE_INDEX_FILE);
  if (v === null) return MISSING;
  const entries = (v as { entries?: unknown }).entries;
  if (!Array.isArray(entries)) return `runtime/${EVIDENCE_INDEX_FILE} has no "entries" array`;
  const map = new Map<string, string>();
  for (const e of entries) {
    if (e && typeof e === 'object' && typeof e.feedback_id === 'string' && typeof e.text === 'string') map.set(e.feedback_id, e.text);
  }
  return map;
}
