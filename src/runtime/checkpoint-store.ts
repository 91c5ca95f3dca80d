/**
 * Where a run's checkpoint records are kept (the seam a cluster swaps, beside the RunStore's): one
 * process keeps them in the run folder's runtime/checkpoint.jsonl; several nodes keep them in
 * PostgreSQL, where the worker that takes up a dead worker's run reads them. Either way a log is
 * appended in order, a burst of records at a time, and `durable()` resolves only once every record
 * appended so far survives the death of the process (and, for the file, a power cut).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointLogWriter, checkpointLine, readCheckpointFile, repairCheckpointFile, type CheckpointRead } from './checkpoint-log.js';
import { CHECKPOINT_FILE, type CheckpointRecord } from './run-checkpoint.js';

/** A live attempt's checkpoint log. */
export interface CheckpointLog {
  append(record: CheckpointRecord): void;
  /** Queues a record made only when it is written or another is appended after it; until then a
   *  later appendLast replaces it (its caller folds the replaced one into the new one). */
  appendLast(make: () => CheckpointRecord): void;
  /** The record appendLast queued is made now, in its place before whatever follows it. */
  settleLast(): void;
  /** Resolves once every record appended so far is durable; rejects when a write failed. */
  durable(): Promise<void>;
  /** Makes what is left durable and closes the log. */
  close(): Promise<void>;
}

export interface CheckpointStore {
  /** The log a live attempt appends to. `resumed`: the attempt goes on after a dead one (a torn last record is cut off first). */
  open(runId: string, root: string, o: { mask?: (json: string) => string; resumed: boolean }): CheckpointLog;
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
    const file = join(root, CHECKPOINT_FILE);
    // what this attempt appends must not be glued to the record the crash tore
    if (o.resumed) repairCheckpointFile(file);
    return new CheckpointLogWriter<CheckpointRecord>(file, o.mask);
  },
  async read(_runId, root) {
    return readCheckpointFile<CheckpointRecord>(join(root, CHECKPOINT_FILE));
  },
  async note(_runId, root, record, mask) {
    const file = join(root, CHECKPOINT_FILE);
    repairCheckpointFile(file);
    appendFileSync(file, checkpointLine(record, mask));
  },
  where(_runId, root) {
    return join(root, CHECKPOINT_FILE);
  },
};
