/** What the page shows of each chat channel (GET /api/channels): its state, its counters, its last error. */
export interface ChannelStatus {
  name: string;
  type: string;
  state: string;
  connected: boolean;
  last_error: string | null;
  last_error_at: string | null;
  messages_in: number;
  messages_out: number;
  edits: number;
  duplicates: number;
  refused: number;
  retries: number;
  failures: number;
  live_replies: number;
}

export interface ChannelRow {
  name: string;
  /** The pill: connected, connecting, disconnected, not started. */
  state: string;
  /** `st-completed` when connected, `st-failed` when it cannot be, none while it tries. */
  tone: 'ok' | 'fail' | 'wait';
  counts: string;
  error: string | null;
}

const n = (v: number): string => v.toLocaleString('en-US');

export function channelRows(channels: readonly ChannelStatus[]): ChannelRow[] {
  return channels.map((c) => {
    const state = c.connected ? 'connected' : c.state === 'starting' ? 'connecting' : c.state === 'unusable' ? 'not started' : c.state;
    const extra = [
      c.live_replies ? `${n(c.live_replies)} replying now` : '',
      c.refused ? `${n(c.refused)} refused` : '',
      c.retries ? `${n(c.retries)} retried` : '',
      c.failures ? `${n(c.failures)} failed` : '',
    ].filter(Boolean);
    return {
      name: `${c.name}${c.type !== c.name ? ` (${c.type})` : ''}`,
      state,
      tone: c.connected ? 'ok' : c.state === 'unusable' || c.state === 'disconnected' ? 'fail' : 'wait',
      counts: [`${n(c.messages_in)} in`, `${n(c.messages_out)} out`, `${n(c.edits)} edits`, ...extra].join(' · '),
      error: c.last_error ? `${c.last_error}${c.last_error_at ? ` (${c.last_error_at.slice(11, 19)})` : ''}` : null,
    };
  });
}
