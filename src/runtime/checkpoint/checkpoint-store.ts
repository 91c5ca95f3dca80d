/**
 * Where a run's checkpoint records are kept (the seam a cluster swaps, beside the RunStore's): one
 * process keeps them in the run folder's runtime/checkpoint.jsonl; several nodes keep them in
 * PostgreSQL, where the worker that takes up a dead worker's run reads them. Either way a log is
 * appended in order, a burst of records at a time, and `durable()` resolves only once every record
 * appended so far survives the death of the process (and, for the file, a power cut).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CheckpointLogWriter,
  checkpointLine,
  readCheckpointFile,
  readCheckpointLog,
  repairCheckpointFile,
  type CheckpointLog,
  type CheckpointRead,
} from './checkpoint-log.js';
import type { CheckpointRecord } from './checkpoint-records.js';
import { RUN_FILES } from '../storage/run-files.js';

export interface CheckpointStore {
  /** The log a live attempt appends to. `resumed`: the attempt goes on after a dead one (a torn last record is cut off first). */
  open(runId: string, root: string, o: { mask?: (json: string) => string; resumed: boolean }): CheckpointLog<CheckpointRecord>;
  /** Every record, in order, as written. */
  read(runId: string, root: string): Promise<CheckpointRead<CheckpointRecord>>;
  /** Adds one record while no attempt is live (what a dead attempt left running, before its run is resumed). */
  note(runId: string, root: string, record: CheckpointRecord, mask?: (json: string) => string): Promise<void>;
  /** Where the records are, for a diagnosis (a file's path, a table's name). */
  where(runId: string, root: string): string;
}

/** One process: the run folder's runtime/checkpoint.jsonl. */
export const fileCheckpoints: CheckpointStore = {
  open(_runId, root, o) {
    const file = join(root, RUN_FILES.checkpoint);
    // what this attempt appends must not be glued to the record the crash tore
    if (o.resumed) repairCheckpointFile(file);
    return new CheckpointLogWriter<CheckpointRecord>(file, o.mask);
  },
  async read(_runId, root) {
    return readCheckpointFile<CheckpointRecord>(join(root, RUN_FILES.checkpoint));
  },
  async note(_runId, root, record, mask) {
    const file = join(root, RUN_FILES.checkpoint);
    repairCheckpointFile(file);
    appendFileSync(file, checkpointLine(record, mask));
  },
  where(_runId, root) {
    return join(root, RUN_FILES.checkpoint);
  },
};

/**
 * A store that keeps each run's checkpoint as its checksummed lines (PostgreSQL for several nodes).
 * It keeps lines, never records: making a record into a line (its checksum, the run's secrets
 * masked) and reading lines back stays here, in the one codec the file uses too, so a damaged row is
 * found as a damaged line would be.
 */
export interface CheckpointLineStore {
  /** A live attempt's log of lines (each without its newline); a commit is all or nothing, so a
   *  resumed attempt has no torn line to cut off first. */
  open(runId: string): CheckpointLog<string>;
  /** Every line, in the order appended. */
  read(runId: string): Promise<string[]>;
  note(runId: string, line: string): Promise<void>;
  where(runId: string): string;
}

/** A line store as the CheckpointStore a run writes and resumes from. */
export function checkpointsInLines(lines: CheckpointLineStore): CheckpointStore {
  const line = (record: CheckpointRecord, mask?: (json: string) => string) => checkpointLine(record, mask).slice(0, -1);
  return {
    open(runId, _root, o) {
      const log = lines.open(runId);
      return {
        append: (record) => log.append(line(record, o.mask)),
        appendLast: (make) => log.appendLast(() => line(make(), o.mask)),
        settleLast: () => log.settleLast(),
        durable: () => log.durable(),
        close: () => log.close(),
      };
    },
    async read(runId) {
      return readCheckpointLog<CheckpointRecord>((await lines.read(runId)).map((l) => `${l}\n`).join(''));
    },
    note: (runId, _root, record, mask) => lines.note(runId, line(record, mask)),
    where: (runId) => lines.where(runId),
  };
}
