/** GET /metrics in the Prometheus text exposition format (no client library needed for a few gauges). */
import { RUN_STATUSES } from '../events/agent-event.js';
import type { RunServiceStats } from '../runtime/run-service-types.js';
import type { StreamCounters } from './stream-counters.js';

const STATES = RUN_STATUSES;

export function prometheusText(stats: RunServiceStats, streams: StreamCounters): string {
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) lines.push(`${name}${labels} ${Number.isFinite(v) ? v : 0}`);
  };
  metric(
    'runtrail_runs',
    'gauge',
    'Runs by state.',
    STATES.map((s) => [`{state="${s}"}`, stats.byState?.[s as keyof typeof stats.byState] ?? 0]),
  );
  metric('runtrail_queue_depth', 'gauge', 'Runs waiting for a slot.', [['', stats.queueDepth]]);
  metric('runtrail_runs_running', 'gauge', 'Runs holding a slot.', [['', stats.running]]);
  metric('runtrail_events_published_total', 'counter', 'Agent events published on run buses.', [['', stats.eventsPublished]]);
  metric('runtrail_sse_clients', 'gauge', 'Connected SSE clients.', [['', streams.sseClients]]);
  metric('runtrail_ws_clients', 'gauge', 'Connected WebSocket clients.', [['', streams.wsClients]]);
  metric('runtrail_stream_frames_sent_total', 'counter', 'Frames written to SSE and WebSocket clients.', [['', streams.framesSent]]);
  metric('runtrail_stream_clients_dropped_total', 'counter', 'Clients dropped for reading too slowly.', [['', streams.clientsDropped]]);
  const models = stats.models;
  if (models) {
    metric('runtrail_model_calls_total', 'counter', 'Model calls that reported token usage.', [['', models.turns]]);
    metric(
      'runtrail_model_tokens_total',
      'counter',
      'Model tokens by kind: input (all, cached included), cached_input, cache_write, output (all, reasoning included), reasoning.',
      (['input', 'cached_input', 'cache_write', 'output', 'reasoning'] as const).map((k) => [`{kind="${k}"}`, models.tokens[k]]),
    );
    metric('runtrail_model_cost_usd_total', 'counter', 'USD of model calls to models with a known price.', [['', models.cost_usd]]);
    metric('runtrail_model_unpriced_calls_total', 'counter', 'Model calls to models without a known price (not in the cost).', [['', models.unpriced_turns]]);
  }
  return lines.join('\n') + '\n';
}
