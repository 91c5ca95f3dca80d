/**
 * The run core's errors in one place: `fail` refuses a request (a RunRequestError the front doors map
 * to HTTP and CLI exits), the diagnoses a run ends with are built by one named constructor per kind,
 * and `RunStop` says why a run's abort signal fired, as a tagged value rather than an error class.
 */
import { Diagnosis, type DiagnosisDict, type DiagnosisInit } from '../events/diagnosis.js';
import { RunRequestError } from './run-request-error.js';
import type { RunErrorCode, RunErrorDetails } from './run-service-types.js';

/** Refuses a request: throws the RunRequestError of `code` (its HTTP status follows from the code). */
export function fail(code: RunErrorCode, message: string, details: RunErrorDetails = {}): never {
  throw new RunRequestError(code, message, details);
}

/** A diagnosis as run files and events carry it. */
export function diagnosis(init: DiagnosisInit): DiagnosisDict {
  return new Diagnosis(init).toDict();
}

/** What a person does about a run that was interrupted: nothing goes on by itself. */
const START_AGAIN = 'start the run again';

/** A run that was live when its process stopped: failed `interrupted`, naming the state it was in and why. */
export function interrupted(state: string, why: string, detail = ''): DiagnosisDict {
  return diagnosis({
    code: 'interrupted',
    severity: 'error',
    summary: `run was interrupted while ${state} (${why})`,
    ...(detail ? { detail } : {}),
    hint: START_AGAIN,
  });
}

/** A run whose process died and that was not resumed (its agent, the operator or its attempts said no). */
export function notResumed(state: string, why: string, detail = ''): DiagnosisDict {
  return diagnosis({
    code: 'interrupted',
    severity: 'error',
    summary: `run was interrupted while ${state} and not resumed: ${why}`,
    detail,
    hint: START_AGAIN,
  });
}

/** A run whose process died and whose resumption threw. */
export function resumeFailed(state: string, error: unknown): DiagnosisDict {
  const message = (error as Error)?.message ?? String(error);
  return diagnosis({
    code: 'interrupted',
    severity: 'error',
    summary: `run was interrupted while ${state} and could not be resumed: ${message}`,
    hint: START_AGAIN,
  });
}

/** A run cancelled by a person or a caller; `reason` in their words when they gave one. */
export function cancelled(reason: string | null, when = ''): DiagnosisDict {
  const summary = `run cancelled${when ? ` ${when}` : ''}${reason ? `: ${reason}` : ''}`;
  return diagnosis({ code: 'cancelled', severity: 'warning', summary });
}

/**
 * Why a run's abort signal fired (the signal's reason is a RunStopped carrying one):
 * - `cancelled`: a person or a caller cancelled it (`reason` in their words, or none);
 * - `interrupted`: its process stops without leaving it to be resumed (a worker's drain ran out), so it fails `interrupted`;
 * - `left`: its process leaves it to be resumed (a server or worker that stops, the run durable): its bus is
 *   sealed first, nothing of its stopping is published or checkpointed, its files are closed and it is not ended.
 */
export type RunStop = { kind: 'cancelled'; reason: string | null } | { kind: 'interrupted'; why: string } | { kind: 'left'; why: string };

/** The abort reason that carries a RunStop (an Error, as code that rethrows a signal's reason expects). */
export class RunStopped extends Error {
  constructor(readonly stop: RunStop) {
    super(stop.kind === 'cancelled' ? (stop.reason ?? 'cancelled') : stop.why);
    this.name = 'RunStopped';
  }
}

/** The reason a cancellation gave, if the stop is one. */
export function reasonOf(stop: RunStop | null): string | null {
  return stop?.kind === 'cancelled' ? stop.reason : null;
}

/** Stops a run: aborts its controller with the reason `stop`. */
export function stopRun(abort: AbortController, stop: RunStop): void {
  abort.abort(new RunStopped(stop));
}

/** Why a run's signal fired; null while it has not. An abort from elsewhere counts as a cancellation without a reason. */
export function stopOf(signal: AbortSignal): RunStop | null {
  if (!signal.aborted) return null;
  return signal.reason instanceof RunStopped ? signal.reason.stop : { kind: 'cancelled', reason: null };
}
