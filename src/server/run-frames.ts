/**
 * The frames of one run as SSE text, exactly as `runtrail replay --format sse` writes them: the whole
 * history goes through one bridge (it is stateful: step indexes, process_steps of `done`), and frames
 * with seq <= after are skipped, so a resume gets exactly the frames after N.
 */
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { createEngineBridge } from '../events/engine-bridge.js';
import { formatSseFrame } from '../channels/sse-adapter.js';

export interface RunFrame {
  /** The AgentEvent seq this frame was built from (= SSE `id:`). */
  seq: number;
  /** `id: <seq>\ndata: <wire>\n\n` */
  text: string;
}

export async function* runFrames(service: RunServiceApi, runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncGenerator<RunFrame> {
  const after = opts.after ?? 0;
  const { signal } = opts;
  const bridge = createEngineBridge({ traceId: await runTraceId(service, runId) });
  // told once rather than asked per event (AbortSignal#aborted validates its receiver on every read)
  let stopped = signal?.aborted ?? false;
  const stop = (): void => void (stopped = true);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const ev of service.events(runId, { after: 0, signal })) {
      if (stopped) return;
      const engineEvent = bridge.translate(ev);
      if (!engineEvent || ev.seq <= after) continue;
      yield { seq: ev.seq, text: formatSseFrame(engineEvent, { wireMeta: false }) };
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

/** The wire's `trace_id` of a run: its OpenTelemetry trace id; a run from before traces keeps its run id. */
export async function runTraceId(service: RunServiceApi, runId: string): Promise<string> {
  const s = await service.get(runId).catch(() => null);
  return s?.trace_id || runId;
}

/** The JSON text of a frame's `data:` line(s) (SSE joins multi-line data with \n). */
export function frameData(text: string): string {
  const lines: string[] = [];
  for (const line of text.split('\n')) if (line.startsWith('data: ')) lines.push(line.slice(6));
  return lines.join('\n');
}

/** Parses `Last-Event-ID` / `?after=` / `{ after }`: a non-negative integer, else an error message. */
export function parseAfter(value: unknown): number | string {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) return `must be a non-negative integer, got ${JSON.stringify(value).slice(0, 40)}`;
  return n;
}
