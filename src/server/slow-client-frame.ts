/** The last frame a client too slow for its queue gets before it is dropped. */
import { makeError } from '../events/engine-event.js';
import { Diagnosis } from '../events/diagnosis.js';
import { formatSseFrame } from '../channels/sse-adapter.js';

export function slowClientFrame(runId: string, limitBytes: number): string {
  const diagnosis = new Diagnosis({
    code: 'client_too_slow',
    severity: 'error',
    summary: 'stream dropped: this client read too slowly',
    detail: `more than ${limitBytes} bytes were waiting for this client`,
    hint: 'reconnect with Last-Event-ID (or ?after=N) to resume; the run goes on',
    retryable: true,
  });
  return formatSseFrame(makeError('client too slow; reconnect to resume', { diagnosis, traceId: runId }), { wireMeta: false });
}
