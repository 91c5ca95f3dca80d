/**
 * Wires reporters → ProcessEventBuffer → (per-operation JSONL log + publish), e.g. publish =
 * `(event) => bus.publish('process', { event })`. Log writes are queued per file so lines keep order;
 * the events that arrive while one is in flight are written by the next, in one append.
 */
import type { OperationReporter } from './operation-reporter-types.js';
import { createOperationReporter, type OperationReporterOptions } from './operation-reporter.js';
import type { RuntimeProcessEvent } from './process-event.js';
import { ProcessEventBuffer } from './process-event-buffer.js';
import { appendRuntimeProcessLog, assertSafeLogId, runtimeProcessLogPath, type RuntimeProcessLogRef } from './runtime-process-log.js';

export interface ProcessPipelineOptions {
  dataDir: string;
  /** The run's conversation_id (or its run_id when it has none). */
  sessionId: string;
  publish: (event: RuntimeProcessEvent) => void;
  intervalMs?: number;
  now?: () => number;
  /** Told about log-write and publish failures; they never reach the tool. */
  onError?: (error: unknown) => void;
}

export interface ProcessPipeline {
  reporter(opts: Omit<OperationReporterOptions, 'sink' | 'now'>): OperationReporter;
  push(event: RuntimeProcessEvent): void;
  /** Emits pending updates and waits until every log line is on disk. */
  flush(): Promise<void>;
  dispose(): Promise<void>;
  /** Log references of every operation seen so far. */
  logRefs(): RuntimeProcessLogRef[];
  readonly errors: number;
}

export function createProcessPipeline(opts: ProcessPipelineOptions): ProcessPipeline {
  assertSafeLogId('sessionId', opts.sessionId);
  const { dataDir, sessionId } = opts;
  const now = opts.now ?? Date.now;
  const writes = new Map<string, Promise<void>>();
  /** per file: the events of its next append, not started yet */
  const queued = new Map<string, RuntimeProcessEvent[]>();
  const refs = new Map<string, RuntimeProcessLogRef>();
  let errors = 0;
  const fail = (err: unknown): void => {
    errors++;
    try {
      opts.onError?.(err);
    } catch {
      // ignore
    }
  };

  const log = (event: RuntimeProcessEvent): void => {
    const opId = event.operationId;
    let path: string;
    try {
      path = runtimeProcessLogPath(dataDir, sessionId, opId);
    } catch (err) {
      fail(err);
      return;
    }
    if (!refs.has(opId)) refs.set(opId, { type: 'runtime_process_log', sessionId, operationId: opId, path });
    // events that arrive while the file's write is in flight go in its next append, together
    const waiting = queued.get(path);
    if (waiting) {
      waiting.push(event);
      return;
    }
    const batch = [event];
    queued.set(path, batch);
    const prev = writes.get(path) ?? Promise.resolve();
    const next = prev
      .then(() => {
        queued.delete(path);
        return appendRuntimeProcessLog({ dataDir, sessionId, operationId: opId, event: batch });
      })
      .then(() => undefined, fail);
    writes.set(path, next);
    void next.then(() => {
      if (writes.get(path) === next) writes.delete(path);
    });
  };

  const buffer = new ProcessEventBuffer({
    intervalMs: opts.intervalMs,
    now,
    emit: (event) => {
      log(event);
      opts.publish(event);
    },
    onEmitError: fail,
  });

  const settle = async (): Promise<void> => {
    while (writes.size > 0) await Promise.all([...writes.values()]);
  };

  return {
    reporter: (r) => createOperationReporter({ ...r, sink: (e) => buffer.push(e), now }),
    push: (e) => buffer.push(e),
    async flush() {
      buffer.flush();
      await settle();
    },
    async dispose() {
      buffer.dispose();
      await settle();
    },
    logRefs: () => [...refs.values()],
    get errors() {
      return errors;
    },
  };
}
