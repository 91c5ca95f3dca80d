/** The OperationReporter tools and skills hold to explain long work (seed 000). */
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

  const send = (status: ProcessStatus, extra: Partial<ProcessEventFields>): void => {
    if (finished) return;
    const ev = makeProcessEvent(
      {
        operationId,
        parentOperationId: opts.parentOperationId,
        targetType: opts.targetType,
        source: opts.source,
        stage,
        current,
        total,
        ...extra,
        status,
      },
      now,
    );
    if (status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'skipped') finished = true;
    opts.sink(ev);
  };

  const reporter: OperationReporter = {
    operationId,
    start(message, payload) {
      send('started', { message, payload });
    },
    progress(update: ProgressUpdate) {
      if (update.stage !== undefined) stage = update.stage;
      if (update.current !== undefined) current = update.current;
      if (update.total !== undefined) total = update.total;
      send('running', { message: update.message, payload: update.payload });
    },
    stage(name, message) {
      stage = name;
      send('running', { message });
    },
    complete(message, payload) {
      if (total !== undefined) current = total;
      send('completed', { message, payload });
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
      });
      if (c.message !== undefined) r.start(c.message);
      return r;
    },
  };
  return reporter;
}
