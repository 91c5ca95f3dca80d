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

/** How long a state change a reader need not see at once may wait to be written, folded with those after it. */
export const STATUS_FOLD_MS = 50;

/** The states a run goes back and forth between once per model turn and tool call: moves among them
 *  are folded by time; any other (the run began, waits for a person, is validated) a reader of the
 *  file must see at once. */
const BACK_AND_FORTH: ReadonlySet<RunStatus> = new Set(['model_thinking', 'tool_executing']);

export class RunStatusWriter {
  /** a folded write that waits, or null */
  private folded: NodeJS.Timeout | null = null;

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

  /** Writes the record as it is now (a folded write that waited is part of it); rejects when this write fails. */
  save(): Promise<void> {
    this.dropFolded();
    return this.persist(this.status);
  }

  /**
   * The state moved `from` → `to` (not to a terminal one, which is written with the run's final files):
   * written now when a reader must see it, else within STATUS_FOLD_MS with what changes meanwhile.
   * Each write of a 1,000-call run's turns was a file replaced; folded, they are at most 20 a second.
   */
  stateChanged(from: RunStatus | null, to: RunStatus): void {
    if (!(from && BACK_AND_FORTH.has(from) && BACK_AND_FORTH.has(to))) {
      void this.save().catch(() => undefined);
      return;
    }
    if (this.folded) return;
    this.folded = setTimeout(() => {
      this.folded = null;
      void this.persist(this.status).catch(() => undefined);
    }, STATUS_FOLD_MS);
    this.folded.unref?.();
  }

  /** A folded write that waits is not made: the run ended, and its status is written with its final files. */
  dropFolded(): void {
    if (this.folded) clearTimeout(this.folded);
    this.folded = null;
  }

  /** Whatever a folded write would write, written now (a run left to be resumed: its file says where it was). */
  settle(): Promise<void> {
    return this.folded ? this.save() : Promise.resolve();
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
    this.dropFolded();
    const { public_documents, ...rest } = end;
    Object.assign(this.status, rest, public_documents ? { public_documents } : {});
  }
}
