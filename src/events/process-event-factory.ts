/** The one constructor of RuntimeProcessEvents: validates, derives percent, scrubs, stamps. */
import { PROCESS_LEVELS, PROCESS_SOURCES, PROCESS_STATUSES, PROCESS_TARGET_TYPES, type ProcessLevel, type RuntimeProcessEvent } from './process-event.js';
import { sanitizeProcessPayload } from './process-payload-sanitizer.js';
import { maskSecretValues } from './secret-values.js';

/** What callers give: the event itself, with `level` and `ts` filled in when absent
 *  (level: 'error' for failed, 'warning' for cancelled, else 'info'; ts: now()). */
export type ProcessEventFields = Omit<RuntimeProcessEvent, 'level' | 'ts'> & { level?: ProcessLevel; ts?: number };

export class ProcessEventError extends TypeError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProcessEventError';
  }
}

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new ProcessEventError(field, `RuntimeProcessEvent.${field} must be one of ${allowed.join('|')}, got ${JSON.stringify(value) ?? String(value)}`);
}

function optNumber(field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ProcessEventError(field, `RuntimeProcessEvent.${field} must be a finite number, got ${String(value)}`);
  }
  return value;
}

function optString(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new ProcessEventError(field, `RuntimeProcessEvent.${field} must be a string, got ${typeof value}`);
  }
  return value;
}

export function makeProcessEvent(fields: ProcessEventFields, now: () => number = Date.now): RuntimeProcessEvent {
  if (!fields || typeof fields !== 'object') {
    throw new ProcessEventError('fields', 'makeProcessEvent: fields must be an object');
  }
  if (typeof fields.operationId !== 'string' || fields.operationId === '') {
    throw new ProcessEventError('operationId', 'RuntimeProcessEvent.operationId must be a non-empty string');
  }
  const targetType = oneOf('targetType', fields.targetType, PROCESS_TARGET_TYPES);
  const source = oneOf('source', fields.source, PROCESS_SOURCES);
  const status = oneOf('status', fields.status, PROCESS_STATUSES);
  const level =
    fields.level === undefined ? (status === 'failed' ? 'error' : status === 'cancelled' ? 'warning' : 'info') : oneOf('level', fields.level, PROCESS_LEVELS);
  const current = optNumber('current', fields.current);
  const total = optNumber('total', fields.total);
  let percent = optNumber('percent', fields.percent);
  if (percent === undefined && current !== undefined && total !== undefined && total > 0) {
    percent = Math.round((current / total) * 1000) / 10;
  }
  if (percent !== undefined) percent = Math.min(100, Math.max(0, percent));
  const ts = optNumber('ts', fields.ts) ?? now();

  const parent = optString('parentOperationId', fields.parentOperationId);
  const stage = optString('stage', fields.stage);
  const rawMessage = optString('message', fields.message);
  const message = rawMessage === undefined ? undefined : maskSecretValues(rawMessage);

  // Built in the interface's key order so log lines read the same everywhere.
  const ev = { operationId: fields.operationId } as RuntimeProcessEvent;
  if (parent) ev.parentOperationId = parent;
  ev.targetType = targetType;
  ev.source = source;
  if (stage !== undefined) ev.stage = stage;
  ev.status = status;
  ev.level = level;
  if (current !== undefined) ev.current = current;
  if (total !== undefined) ev.total = total;
  if (percent !== undefined) ev.percent = percent;
  if (message !== undefined) ev.message = message;
  if (fields.payload !== undefined) ev.payload = sanitizeProcessPayload(fields.payload);
  ev.ts = ts;
  return ev;
}
