import type { OperationReporter } from './operation-reporter-types.js';

/** A reporter that reports nothing: for a tool run outside the executor, or when reporting is unavailable. */
export const NOOP_REPORTER: OperationReporter = {
  operationId: '',
  start() {},
  progress() {},
  stage() {},
  complete() {},
  fail() {},
  cancel() {},
  skip() {},
  child: () => NOOP_REPORTER,
};
