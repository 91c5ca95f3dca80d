/** GET /api/channels: each chat channel's state (connected, last error, messages in and out) for the page and scripts. */
import type { FastifyInstance } from 'fastify';
import type { ChannelHost } from './channel-host/channel-host.js';
import type { ChannelStatus } from './channel-host/types.js';

export function registerChannelRoutes(app: FastifyInstance, host: ChannelHost | undefined): void {
  app.get('/api/channels', async () => ({ channels: host?.status() ?? [] }));
}

/** The channels' counters in the Prometheus text format, appended to /metrics. */
export function channelMetricsText(channels: readonly ChannelStatus[]): string {
  if (!channels.length) return '';
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, value: (c: ChannelStatus) => number): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const c of channels) lines.push(`${name}{channel="${c.name}",type="${c.type}"} ${value(c)}`);
  };
  metric('runtrail_channel_connected', 'gauge', 'Whether a chat channel is connected to its service (1) or not (0).', (c) => (c.connected ? 1 : 0));
  metric('runtrail_channel_messages_in_total', 'counter', 'Messages and button presses a chat channel took.', (c) => c.messages_in);
  metric('runtrail_channel_messages_out_total', 'counter', 'Messages and files a chat channel posted.', (c) => c.messages_out);
  metric('runtrail_channel_edits_total', 'counter', 'Edits of posted messages (live replies).', (c) => c.edits);
  metric('runtrail_channel_duplicates_total', 'counter', 'Inbound deliveries dropped as handled before.', (c) => c.duplicates);
  metric('runtrail_channel_refused_total', 'counter', 'Messages and presses from senders not in allow_from.', (c) => c.refused);
  metric('runtrail_channel_retries_total', 'counter', 'Calls to the service tried again (429, 5xx, network).', (c) => c.retries);
  metric('runtrail_channel_failures_total', 'counter', 'Calls to the service given up.', (c) => c.failures);
  metric('runtrail_channel_live_replies', 'gauge', 'Replies being streamed into chats now.', (c) => c.live_replies);
  return `${lines.join('\n')}\n`;
}
