import { NOOP_REPORTER } from '../../events/noop-reporter.js';
import type { OperationReporter } from '../../events/operation-reporter-types.js';

/**
 * The call's reporter, made on first use: most calls never report progress, and a pipeline reporter
 * (an operation id, validated fields) costs more than the call of a fast tool. Reporting is best
 * effort: a reporter that cannot be made leaves the tool running and its updates dropped.
 */
export class CallReporter implements OperationReporter {
  used = false;
  ended = false;
  private inner: OperationReporter | null | undefined;

  constructor(private readonly make: () => OperationReporter | undefined) {}

  private get r(): OperationReporter | null {
    if (this.inner === undefined) {
      try {
        this.inner = this.make() ?? null;
      } catch {
        this.inner = null;
      }
    }
    return this.inner;
  }

  get operationId(): string {
    return this.r?.operationId ?? '';
  }

  private use(end = false): OperationReporter | null {
    this.used = true;
    if (end) this.ended = true;
    return this.r;
  }

  start(message?: string, payload?: unknown): void {
    this.use()?.start(message, payload);
  }
  progress(u: Parameters<OperationReporter['progress']>[0]): void {
    this.use()?.progress(u);
  }
  stage(stage: string, message?: string): void {
    this.use()?.stage(stage, message);
  }
  complete(message?: string, payload?: unknown): void {
    this.use(true)?.complete(message, payload);
  }
  fail(message?: string, payload?: unknown): void {
    this.use(true)?.fail(message, payload);
  }
  cancel(message?: string): void {
    this.use(true)?.cancel(message);
  }
  skip(message?: string): void {
    this.use(true)?.skip(message);
  }
  child(o: Parameters<OperationReporter['child']>[0]): OperationReporter {
    return this.r?.child(o) ?? NOOP_REPORTER;
  }
}
