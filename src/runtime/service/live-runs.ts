/**
 * The runs this process holds while they run: created here (a local queue), claimed by its worker,
 * started as a subagent or resumed here. A run is held from the moment its files say it exists until
 * its last file is written. The parts of the run service find a live run's record here, and only here.
 */
import type { RunRecord } from '../run/run-record.js';

export class LiveRuns {
  private readonly runs = new Map<string, RunRecord>();

  get(runId: string): RunRecord | undefined {
    return this.runs.get(runId);
  }

  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  hold(rec: RunRecord): void {
    this.runs.set(rec.runId, rec);
  }

  drop(runId: string): void {
    this.runs.delete(runId);
  }

  /** The runs held now (a copy: ending them while going through it is fine). */
  all(): RunRecord[] {
    return [...this.runs.values()];
  }
}
