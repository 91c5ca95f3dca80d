import type { ProcessSource, ProcessTargetType } from './process-event.js';

/** What a long tool or skill holds to explain itself while it runs. */
export interface ProgressUpdate {
  stage?: string;
  current?: number;
  total?: number;
  message?: string;
  payload?: unknown;
}

export interface OperationReporter {
  readonly operationId: string;
  start(message?: string, payload?: unknown): void;
  progress(update: ProgressUpdate): void;
  stage(stage: string, message?: string): void;
  complete(message?: string, payload?: unknown): void;
  fail(message?: string, payload?: unknown): void;
  cancel(message?: string): void;
  skip(message?: string): void;
  child(opts: { operationId?: string; targetType: ProcessTargetType; source: ProcessSource; message?: string }): OperationReporter;
}
