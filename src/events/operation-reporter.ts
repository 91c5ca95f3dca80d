/** The OperationReporter tools and skills hold to explain long work. */
import { randomUUID } from 'node:crypto';
import type { OperationReporter, ProgressUpdate } from './operation-reporter-types.js';
import type { ProcessSource, ProcessStatus, ProcessTargetType, RuntimeProcessEvent } from './process-event.js';
import { makeProcessEvent, type ProcessEventFields } from './process-event-factory.js';

export interface OperationReporterOptions {
  /** default: a fresh `op_<uuid>` */
  operationId?: string;
  targetType: ProcessTargetType;
  source: ProcessSource;
  parentOperationId?: string;
  sink: (event: RuntimeProcessEvent) => void;
  now?: () => number;
  /**
   * Told when a call carries invalid fields (e.g. `current: NaN`); that update is dropped so a
   * progress bug never breaks the tool itself. Default: one line on stderr per operation.
   */
  onInvalid?: (error: unknown) => void;
}

export function newOperationId(): string {
  return `op_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}

/**
 * After a terminal call (complete/fail/cancel/skip) later calls are ignored, so a tool that reports
 * "completed" and then hits a finally-block "fail" does not contradict itself.
 * `child()` with a `message` starts the child at once.
 */
export function createOperationReporter(opts: OperationReporterOptions): OperationReporter {
  if (!opts || typeof opts.sink !== 'function') throw new TypeError('createOperationReporter: sink must be a function');
  const operationId = opts.operationId ?? newOperationId();
  const now = opts.now ?? Date.now;
  // Validate the fixed fields once, up front, so a bad targetType/source fails at creation.
  makeProcessEvent({ operationId, targetType: opts.targetType, source: opts.source, status: 'queued' }, now);

  let finished = false;
  let stage: string | undefined;
  let current: number | undefined;
  let total: number | undefined;
  let children = 0;
  let warned = false;
  const onInvalid =
    opts.onInvalid ??
    ((err: unknown) => {
      if (warned) return;
      warned = true;
      process.stderr.write(`[runtrail] operation ${operationId}: dropped a progress update: ${err instanceof Error ? err.message : String(err)}\n`);
    });

  const isTerminal = (st: ProcessStatus): boolean => st === 'completed' || st === 'failed' || st === 'cancelled' || st === 'skipped';

  /** Builds and sinks one event; returns false (and tells onInvalid) when its fields are invalid. */
  const send = (status: ProcessStatus, extra: Partial<ProcessEventFields>, state = { stage, current, total }): boolean => {
    if (finished) return false;
    const fixed = { operationId, parentOperationId: opts.parentOperationId, targetType: opts.targetType, source: opts.source };
    let ev: RuntimeProcessEvent;
    try {
      ev = makeProcessEvent({ ...fixed, ...state, ...extra, status }, now);
    } catch (err) {
      onInvalid(err);
      if (!isTerminal(status)) return false;
      // A terminal call still ends the operation, without the bad fields.
      ev = makeProcessEvent({ ...fixed, stage, status }, now);
    }
    if (isTerminal(status)) finished = true;
    opts.sink(ev);
    return true;
  };

  const reporter: OperationReporter = {
    operationId,
    start(message, payload) {
      send('started', { message, payload });
    },
    progress(update: ProgressUpdate) {
      // Fields stick for later updates only once they proved valid.
      const next = { stage: update.stage ?? stage, current: update.current ?? current, total: update.total ?? total };
      if (send('running', { message: update.message, payload: update.payload }, next)) ({ stage, current, total } = next);
    },
    stage(name, message) {
      const next = { stage: name, current, total };
      if (send('running', { message }, next)) stage = name;
    },
    complete(message, payload) {
      send('completed', { message, payload }, { stage, current: total ?? current, total });
    },
    fail(message, payload) {
      send('failed', { message, payload });
    },
    cancel(message) {
      send('cancelled', { message });
    },
    skip(message) {
      send('skipped', { message });
    },
    child(c) {
      children++;
      const r = createOperationReporter({
        operationId: c.operationId ?? `${operationId}.${children}`,
        targetType: c.targetType,
        source: c.source,
        parentOperationId: operationId,
        sink: opts.sink,
        now,
        onInvalid: opts.onInvalid,
      });
      if (c.message !== undefined) r.start(c.message);
      return r;
    },
  };
  return reporter;
}
