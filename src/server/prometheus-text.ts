/** GET /metrics in the Prometheus text exposition format (no client library needed for a few gauges). */
import type { RunServiceStats } from '../runtime/run-service-types.js';
import type { StreamCounters } from './stream-counters.js';

const STATES = ['queued', 'created', 'planning', 'model_thinking', 'tool_executing', 'validating', 'completed', 'failed', 'cancelled'];

export function prometheusText(stats: RunServiceStats, streams: StreamCounters): string {
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) lines.push(`${name}${labels} ${Number.isFinite(v) ? v : 0}`);
  };
  metric('runtrail_runs', 'gauge', 'Runs by state.', STATES.map((s) => [`{state="${s}"}`, stats.byState?.[s as keyof typeof stats.byState] ?? 0]));
  metric('runtrail_queue_depth', 'gauge', 'Runs waiting for a slot.', [['', stats.queueDepth]]);
  metric('runtrail_runs_running', 'gauge', 'Runs holding a slot.', [['', stats.running]]);
  metric('runtrail_events_published_total', 'counter', 'Agent events published on run buses.', [['', stats.eventsPublished]]);
  metric('runtrail_sse_clients', 'gauge', 'Connected SSE clients.', [['', streams.sseClients]]);
  metric('runtrail_ws_clients', 'gauge', 'Connected WebSocket clients.', [['', streams.wsClients]]);
  metric('runtrail_stream_frames_sent_total', 'counter', 'Frames written to SSE and WebSocket clients.', [['', streams.framesSent]]);
  metric('runtrail_stream_clients_dropped_total', 'counter', 'Clients dropped for reading too slowly.', [['', streams.clientsDropped]]);
  return lines.join('\n') + '\n';
}
