/**
 * The trace a run belongs to (W3C Trace Context): its trace id is the OpenTelemetry trace id, and the
 * wire's `trace_id`, so a frame leads to its trace. A caller's `traceparent` makes the run part of the
 * caller's trace; without one (or with one that does not parse) the run starts a trace of its own.
 * Decided at create whether or not spans are exported, so the id is the same either way.
 */
import { randomBytes } from 'node:crypto';

export interface RunTraceContext {
  /** 32 lowercase hex digits, never all zeros */
  traceId: string;
  /** the caller's span (16 hex digits) the run's span is a child of; null for a trace of the run's own */
  parentSpanId: string | null;
  /** the caller's sampled flag; true for a trace of the run's own */
  sampled: boolean;
}

export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
// version-traceid-parentid-flags; a later version may append fields after a dash (W3C §3.2.4)
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A `traceparent` header value as W3C Trace Context level 1 reads it, or null when it is not one. */
export function parseTraceparent(value: unknown): TraceParent | null {
  if (typeof value !== 'string') return null;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === 'ff') return null;
  // version 00 has exactly four fields
  if (version === '00' && rest !== undefined) return null;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

export function newTraceId(): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (id !== ZERO_TRACE) return id;
  }
}

export function isTraceId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value) && value !== ZERO_TRACE;
}

/** The run's trace: the caller's when `traceparent` parses (W3C: an invalid one is ignored), else a new one. */
export function runTraceContext(traceparent?: unknown): RunTraceContext {
  const p = parseTraceparent(traceparent);
  return p ? { traceId: p.traceId, parentSpanId: p.spanId, sampled: p.sampled } : { traceId: newTraceId(), parentSpanId: null, sampled: true };
}
