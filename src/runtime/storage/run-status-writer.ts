/**
 * The one writer of a run's status (runtime/run_status.json): every change of the record goes through
 * here, named for what happened to the run, and `save` writes it. The record object itself is shared
 * read-only (`current`; the service's store lists runs by it), so a change is seen at once and written
 * when its caller says: a state change right away, a terminal one with the run's final files.
 */
import type { RunStatus } from '../../events/agent-event.js';
import type { DiagnosisDict } from '../../events/diagnosis.js';
import type { RunStatusFile } from '../run-service-types.js';

/** What a run's status says once it ended. */
export interface RunStatusEnd {
  status: 'completed' | 'failed' | 'cancelled';
  finished_at: string;
  final_answer: string;
  diagnosis: DiagnosisDict | null;
  /** the seq of the run's terminal event */
  last_seq: number;
  /** absent: the documents listed so far stay */
  public_documents?: RunStatusFile['public_documents'];
}

export class RunStatusWriter {
  /**
   * `persist` writes the record as it is (it takes a snapshot of its own when it writes later);
   * its promise rejects when that write fails.
   */
  constructor(
    private readonly status: RunStatusFile,
    private readonly persist: (status: RunStatusFile) => Promise<void>,
  ) {}

  get current(): Readonly<RunStatusFile> {
    return this.status;
  }

  /** Writes the record as it is now; rejects when this write fails. */
  save(): Promise<void> {
    return this.persist(this.status);
  }

  /** The run's state changed to `to`; `seq` is the seq of the run.state event that says so (the next one published). */
  moved(to: RunStatus, seq: number): void {
    this.status.status = to;
    this.status.last_seq = seq;
  }

  /** The run's first attempt started (a resumed one keeps the first start). */
  started(at: string): void {
    this.status.started_at ??= at;
  }

  /** The subagent runs the run started, in order; written at once. */
  children(runIds: readonly string[]): Promise<void> {
    this.status.children = [...runIds];
    return this.save();
  }

  /** The run ended: its terminal status, answer and diagnosis. Written by the caller with the final files. */
  ended(end: RunStatusEnd): void {
    const { public_documents, ...rest } = end;
    Object.assign(this.status, rest, public_documents ? { public_documents } : {});
  }
}
