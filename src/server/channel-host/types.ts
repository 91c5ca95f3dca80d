/**
 * The map of the channel host: what it counts and shows for each channel (GET /api/channels,
 * /metrics, the page), and the one function other parts call to post into a chat.
 */
import type { ChatAddress } from '../../channels/channel-types.js';

/** Counters of one channel since the server started; the host owns them, deliveries add to them. */
export interface ChannelCounters {
  /** Inbound messages and presses taken (a delivery seen before is a duplicate, not counted here). */
  messagesIn: number;
  /** Messages and files posted. */
  messagesOut: number;
  edits: number;
  /** Inbound deliveries dropped because they were handled before. */
  duplicates: number;
  /** Messages and presses from senders not allowed. */
  refused: number;
  /** Calls tried again after a 429, a 5xx or a network failure. */
  retries: number;
  /** Calls given up. */
  failures: number;
  lastError: string | null;
}

export type ChannelPhase = 'starting' | 'connected' | 'disconnected' | 'unusable' | 'stopped';

/** One channel as GET /api/channels shows it. */
export interface ChannelStatus {
  name: string;
  type: string;
  /** The file it is configured in. */
  file: string;
  state: ChannelPhase;
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
  /** Replies being streamed to chats now. */
  live_replies: number;
}

/** Where an announcement goes: a channel of channels.json and a chat of it. */
export interface ChatTarget {
  channel: string;
  /** The service's chat id (Telegram chat id, Slack channel id, Feishu chat_id). */
  chat: string;
  /** A thread inside the chat (Slack thread_ts, Telegram topic id). */
  thread?: string;
}

export type AnnounceResult = { ok: true; messages: number } | { ok: false; error: string };

/**
 * Posts a finished run's assembled answer (the IM buffer's, split at the channel's limit, each part
 * once) and its files to a chat. What schedules and webhooks call to tell a chat a run's outcome.
 */
export type ChatAnnouncer = (target: ChatTarget, runId: string) => Promise<AnnounceResult>;

export function addressOf(t: ChatTarget): ChatAddress {
  return { chat: t.chat, ...(t.thread ? { thread: t.thread } : {}) };
}
