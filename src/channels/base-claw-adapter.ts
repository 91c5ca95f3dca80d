/**
 * The base of every channel adapter: `emit` lifts plain objects with `fromWire`,
 * fills observability defaults, counts, and swallows handler errors. An adapter never throws
 * into the engine.
 */
import { fromWire, type EngineEvent } from '../events/engine-event.js';

export interface ClawAdapterOptions {
  traceId?: string;
  tenantId?: string;
  /** Told about dropped input and handler failures; default writes one line to stderr. */
  log?: (message: string, error?: unknown) => void;
}

export interface ClawAdapterStats {
  received: number;
  handled: number;
  dropped: number;
  errors: number;
}

const defaultLog = (message: string, error?: unknown): void => {
  process.stderr.write(`[runtrail] ${message}${error instanceof Error ? `: ${error.message}` : ''}\n`);
};

export abstract class BaseClawAdapter {
  abstract readonly claw: string;
  protected readonly traceId: string;
  protected readonly tenantId: string;
  private readonly log: (message: string, error?: unknown) => void;
  readonly stats: ClawAdapterStats = { received: 0, handled: 0, dropped: 0, errors: 0 };

  /** Pass this where the engine wants an `on_event` callback. */
  readonly onEvent = (event: unknown): boolean => this.emit(event);

  constructor(opts: ClawAdapterOptions = {}) {
    this.traceId = opts.traceId ?? '';
    this.tenantId = opts.tenantId ?? '';
    this.log = opts.log ?? defaultLog;
  }

  /** Returns whether the event was handled; garbage is dropped and counted, never thrown. */
  emit(event: unknown): boolean {
    this.stats.received++;
    let ev: EngineEvent | null;
    try {
      ev = fromWire(event);
    } catch (err) {
      ev = null;
      this.safeLog(`${this.claw} adapter: could not read event`, err);
    }
    if (!ev) {
      this.stats.dropped++;
      this.safeLog(`${this.claw} adapter dropped an event that is not a wire event`);
      return false;
    }
    try {
      this.handle(this.normalize(ev));
      this.stats.handled++;
      return true;
    } catch (err) {
      this.stats.errors++;
      this.safeLog(`${this.claw} adapter failed on a ${ev.type} event`, err);
      return false;
    }
  }

  protected normalize(ev: EngineEvent): EngineEvent {
    return ev.withDefaults({ traceId: this.traceId, tenantId: this.tenantId, claw: this.claw });
  }

  protected abstract handle(ev: EngineEvent): void;

  private safeLog(message: string, error?: unknown): void {
    try {
      this.log(message, error);
    } catch {
      // logging is best effort
    }
  }
}
