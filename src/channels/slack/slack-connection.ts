/**
 * Slack, translated: Socket Mode envelopes (`message` and `app_mention` events, `block_actions`)
 * become InboundMessage / InboundPress — each acknowledged at once, as Slack asks within 3 s — and
 * the connection's sends become chat.postMessage, chat.update and files.uploadV2. The Web API client
 * never retries by itself (a repeated chat.postMessage would post twice); a 429 comes back as
 * `rate_limited` with its Retry-After for the host's policy.
 */
import { SocketModeClient } from '@slack/socket-mode';
import { ErrorCode, WebClient, type WebAPICallError } from '@slack/web-api';
import type {
  ChannelCheck,
  ChannelConnection,
  ChannelContext,
  ChatAddress,
  ChatType,
  DeliveryFailure,
  InboundFile,
  OutboundMessage,
  SendResult,
} from '../channel-types.js';
import { httpFailure, networkFailure } from '../network-failure.js';

/** The longest text one message of the service may carry. */
export const SLACK_TEXT_LIMIT = 4000;

interface SlackSettings {
  botToken: string;
  appToken: string;
  /** With a trailing slash, as the SDK joins method names to it. */
  apiUrl: string;
  editIntervalMs: number;
}

function settingsOf(c: Record<string, unknown>): SlackSettings {
  const root = typeof c.api_url === 'string' ? c.api_url : 'https://slack.com/api';
  return {
    botToken: String(c.bot_token),
    appToken: String(c.app_token),
    apiUrl: `${root}/`,
    editIntervalMs: typeof c.edit_interval_ms === 'number' ? c.edit_interval_ms : 1500,
  };
}

/** The SDK's logger, quiet: what matters reaches the host as state and failures (masked there). */
const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error' as never, setName() {} };

function webClient(token: string, s: SlackSettings): WebClient {
  return new WebClient(token, { slackApiUrl: s.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logger: quiet, timeout: 30_000 });
}

/** A Web API error as data. */
export function slackFailure(err: unknown): DeliveryFailure {
  const e = err as Partial<WebAPICallError> & { code?: string };
  switch (e?.code) {
    case ErrorCode.RateLimitedError:
      return { kind: 'rate_limited', retryAfterMs: ((e as { retryAfter?: number }).retryAfter ?? 1) * 1000, message: 'ratelimited' };
    case ErrorCode.HTTPError: {
      const h = e as { statusCode: number; statusMessage: string; headers?: Record<string, string> };
      const after = Number(h.headers?.['retry-after']);
      return httpFailure(h.statusCode, `HTTP ${h.statusCode} ${h.statusMessage}`, Number.isFinite(after) && after > 0 ? after * 1000 : undefined);
    }
    case ErrorCode.PlatformError: {
      const error = String((e as { data?: { error?: string } }).data?.error ?? 'error');
      // Slack's own "try later" answers, though the HTTP status was 200
      if (error === 'ratelimited') return { kind: 'rate_limited', retryAfterMs: 1000, message: error };
      if (['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout'].includes(error))
        return { kind: 'unavailable', landed: 'maybe', message: error };
      return { kind: 'rejected', message: error };
    }
    case ErrorCode.RequestError:
      return networkFailure((e as { original?: unknown }).original ?? err);
    default:
      return networkFailure(err);
  }
}

async function result(p: Promise<{ ts?: string }>, fallbackId?: string): Promise<SendResult> {
  try {
    const r = await p;
    return { ok: true, messageId: r.ts ?? fallbackId ?? '' };
  } catch (e) {
    return { ok: false, failure: slackFailure(e) };
  }
}

/** Block Kit for a message with buttons: the text in a section, the buttons in an actions block. */
function blocksOf(msg: OutboundMessage): unknown[] | undefined {
  if (!msg.buttons) return undefined;
  if (!msg.buttons.length) return [];
  return [
    { type: 'section', text: { type: 'mrkdwn', text: msg.text.slice(0, 3000) } },
    ...msg.buttons.map((row, r) => ({
      type: 'actions',
      elements: row.map((b, i) => ({
        type: 'button',
        action_id: `runtrail_${r}_${i}`,
        text: { type: 'plain_text', text: b.label },
        value: b.value,
        ...(b.style ? { style: b.style } : {}),
      })),
    })),
  ];
}

/** Slack's escapes in message text (&amp; &lt; &gt;) undone, the bot's mention removed. */
export function slackText(text: string, botUserId: string): { text: string; mentioned: boolean } {
  const mention = `<@${botUserId}>`;
  const mentioned = text.includes(mention);
  const plain = text.split(mention).join('').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return { text: plain.replace(/[ \t]{2,}/g, ' ').trim(), mentioned };
}

export async function checkSlack(config: Record<string, unknown>, signal: AbortSignal): Promise<ChannelCheck> {
  const s = settingsOf(config);
  try {
    const auth = await webClient(s.botToken, s).auth.test();
    if (signal.aborted) return { ok: false, error: 'timed out' };
    // the app token opens Socket Mode connections: asked for one URL, not connected
    await new WebClient(undefined, {
      slackApiUrl: s.apiUrl,
      retryConfig: { retries: 0 },
      logger: quiet,
      headers: { Authorization: `Bearer ${s.appToken}` },
    }).apps.connections.open({});
    return {
      ok: true,
      detail: `bot ${String(auth.user)} (${String(auth.user_id)}) in ${String(auth.team)}, Socket Mode open, at ${s.apiUrl.replace(/\/$/, '')}`,
    };
  } catch (e) {
    return { ok: false, error: `${s.apiUrl.replace(/\/$/, '')}: ${slackFailure(e).message}` };
  }
}

interface SlackEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  files?: Array<{ id: string; name?: string; size?: number; url_private_download?: string; url_private?: string }>;
}

interface BlockActions {
  type: string;
  user?: { id: string; username?: string; name?: string };
  channel?: { id: string };
  container?: { channel_id?: string; message_ts?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: Array<{ value?: string; action_ts?: string }>;
}

export async function startSlack(ctx: ChannelContext): Promise<ChannelConnection> {
  const s = settingsOf(ctx.config);
  const web = webClient(s.botToken, s);
  const auth = await web.auth.test().catch((e: unknown) => {
    throw new Error(`auth.test at ${s.apiUrl}: ${slackFailure(e).message}`);
  });
  const botUserId = String(auth.user_id);
  const apiOrigin = new URL(s.apiUrl).origin;
  const socket = new SocketModeClient({ appToken: s.appToken, logger: quiet, clientOptions: { slackApiUrl: s.apiUrl, retryConfig: { retries: 0 } } });

  /** Files are fetched with the bot token only from Slack's file host or the configured API's origin. */
  async function download(url: string): Promise<Uint8Array> {
    const u = new URL(url);
    if (u.origin !== apiOrigin && u.hostname !== 'files.slack.com') throw new Error(`a file at ${u.origin} is not fetched with the bot token`);
    const res = await fetch(url, { headers: { Authorization: `Bearer ${s.botToken}` }, signal: ctx.signal });
    if (!res.ok) throw new Error(`downloading the file failed: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  function filesOf(ev: SlackEvent): InboundFile[] {
    return (ev.files ?? []).flatMap((f) => {
      const url = f.url_private_download ?? f.url_private;
      return url ? [{ name: f.name ?? f.id, ...(f.size ? { bytes: f.size } : {}), download: () => download(url) }] : [];
    });
  }

  function chatTypeOf(channel: string, channelType?: string): ChatType {
    return channelType === 'im' || (!channelType && channel.startsWith('D')) ? 'direct' : 'group';
  }

  async function onMessage(ev: SlackEvent): Promise<void> {
    if (!ev.channel || !ev.ts || !ev.user || ev.bot_id || ev.user === botUserId) return;
    if (ev.subtype && ev.subtype !== 'file_share') return; // edits, deletions, joins, bots
    const chatType = chatTypeOf(ev.channel, ev.channel_type);
    const { text, mentioned } = slackText(ev.text ?? '', botUserId);
    // in a channel the reply goes in the message's thread: the thread is the conversation
    const thread = ev.thread_ts ?? (chatType === 'group' ? ev.ts : undefined);
    const to: ChatAddress = { chat: ev.channel, ...(thread ? { thread } : {}) };
    await ctx.receive({
      // the message, not the event: an app_mention and its message event are one message, and Slack
      // resends an event (same event_id) for the same message
      deliveryId: `${ev.channel}:${ev.ts}`,
      messageId: ev.ts,
      to,
      chatType,
      sender: { id: ev.user },
      text,
      addressed: mentioned || ev.type === 'app_mention',
      ...(ev.thread_ts && ev.thread_ts !== ev.ts ? { replyTo: ev.thread_ts } : {}),
      files: filesOf(ev),
    });
  }

  async function onActions(body: BlockActions): Promise<void> {
    const action = body.actions?.[0];
    const channel = body.channel?.id ?? body.container?.channel_id;
    const messageTs = body.message?.ts ?? body.container?.message_ts;
    if (body.type !== 'block_actions' || !action?.value || !channel || !messageTs || !body.user) return;
    const thread = body.message?.thread_ts ?? body.container?.thread_ts;
    const to: ChatAddress = { chat: channel, ...(thread ? { thread } : {}) };
    const answer = await ctx.press({
      deliveryId: `${channel}:${messageTs}:${action.action_ts ?? ''}:${body.user.id}`,
      messageId: messageTs,
      to,
      chatType: chatTypeOf(channel),
      sender: { id: body.user.id, ...(body.user.username ? { name: `@${body.user.username}` } : {}) },
      value: action.value,
    });
    // the presser alone sees the answer
    await web.chat
      .postEphemeral({ channel, user: body.user.id, text: answer.text, ...(thread ? { thread_ts: thread } : {}) })
      .catch((e: unknown) => ctx.log('warn', `chat.postEphemeral failed: ${slackFailure(e).message}`));
  }

  type Envelope = { ack: () => Promise<void>; event?: SlackEvent; body?: unknown };
  const take = (handle: (env: Envelope) => Promise<void>) => async (env: Envelope) => {
    await env.ack().catch(() => undefined);
    await handle(env).catch((e: unknown) => ctx.log('error', `an event could not be handled: ${(e as Error)?.message ?? String(e)}`));
  };
  socket.on(
    'message',
    take((env) => (env.event ? onMessage(env.event) : Promise.resolve())),
  );
  socket.on(
    'app_mention',
    take((env) => (env.event ? onMessage(env.event) : Promise.resolve())),
  );
  socket.on(
    'interactive',
    take((env) => onActions(env.body as BlockActions)),
  );
  socket.on('connected', () => ctx.status({ connected: true }));
  socket.on('reconnecting', () => ctx.status({ connected: false, error: 'Socket Mode connection lost; reconnecting' }));
  socket.on('error', (e: unknown) => ctx.status({ connected: false, error: `Socket Mode: ${(e as Error)?.message ?? String(e)}` }));
  await socket.start().catch((e: unknown) => {
    throw new Error(`Socket Mode at ${s.apiUrl}: ${slackFailure(e).message}`);
  });
  const onAbort = () => void socket.disconnect().catch(() => undefined);
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  const thread = (to: ChatAddress) => (to.thread ? { thread_ts: to.thread } : {});
  return {
    textLimit: SLACK_TEXT_LIMIT,
    sendsAreKeyed: false,
    editIntervalMs: () => s.editIntervalMs,
    send: (to, msg) => {
      const blocks = blocksOf(msg);
      return result(
        web.chat.postMessage({
          channel: to.chat,
          text: msg.text,
          ...thread(to),
          ...(blocks ? { blocks: blocks as never } : {}),
          unfurl_links: false,
          unfurl_media: false,
        }),
      );
    },
    edit: (to, messageId, msg) => {
      const blocks = blocksOf(msg);
      return result(web.chat.update({ channel: to.chat, ts: messageId, text: msg.text, ...(blocks ? { blocks: blocks as never } : {}) }), messageId);
    },
    async sendFile(to, file) {
      try {
        const where = to.thread ? { channel_id: to.chat, thread_ts: to.thread } : { channel_id: to.chat };
        const r = (await web.files.uploadV2({ ...where, file: file.path, filename: file.name, title: file.name })) as {
          files?: Array<{ files?: Array<{ id?: string }> }>;
        };
        return { ok: true, messageId: r.files?.[0]?.files?.[0]?.id ?? '' };
      } catch (e) {
        // the upload is three calls (get a URL, post the bytes, complete): a failure may leave it half done, never posted twice
        return { ok: false, failure: slackFailure(e) };
      }
    },
    async stop() {
      ctx.signal.removeEventListener('abort', onAbort);
      await socket.disconnect().catch(() => undefined);
    },
  };
}
