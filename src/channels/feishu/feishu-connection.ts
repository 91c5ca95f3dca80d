/**
 * Feishu / Lark, translated: `im.message.receive_v1` and `card.action.trigger` events from the SDK's
 * long connection become InboundMessage / InboundPress (a press is answered with a toast), and the
 * connection's sends become interactive cards — created with a `uuid` (Feishu posts a message once
 * per uuid within an hour, so a repeated send never posts twice), updated with PATCH — and files
 * uploaded, then posted as file messages.
 */
import { createReadStream } from 'node:fs';
import * as lark from '@larksuiteoapi/node-sdk';
import type {
  ChannelCheck,
  ChannelConnection,
  ChannelContext,
  ChatAddress,
  DeliveryFailure,
  InboundFile,
  OutboundMessage,
  SendResult,
} from '../channel-types.js';
import { httpFailure, networkFailure } from '../network-failure.js';

/** The longest text one message of the service may carry. */
export const FEISHU_TEXT_LIMIT = 6000;

interface FeishuSettings {
  appId: string;
  appSecret: string;
  domain: string;
  editIntervalMs: number;
}

function settingsOf(c: Record<string, unknown>): FeishuSettings {
  return {
    appId: String(c.app_id),
    appSecret: String(c.app_secret),
    domain: typeof c.domain === 'string' ? c.domain : 'https://open.feishu.cn',
    editIntervalMs: typeof c.edit_interval_ms === 'number' ? c.edit_interval_ms : 1000,
  };
}

/** Feishu's frequency-limit code: a 429 (or a 400 from older APIs) with x-ogw-ratelimit-reset. */
const RATE_LIMITED = 99991400;
/** Files a bot may upload into a chat. */
const UPLOAD_LIMIT = 30 * 1024 * 1024;

const quiet = { error() {}, warn() {}, info() {}, debug() {}, trace() {} };

/** `fresh`: no token from the SDK's process-wide cache (a check must prove the secret, not reuse a token). */
function client(s: FeishuSettings, fresh = false): lark.Client {
  return new lark.Client({
    appId: s.appId,
    appSecret: s.appSecret,
    domain: s.domain,
    appType: lark.AppType.SelfBuild,
    loggerLevel: lark.LoggerLevel.error,
    logger: quiet,
    ...(fresh ? { disableTokenCache: true } : {}),
  });
}

interface Answer {
  code?: number;
  msg?: string;
  data?: { message_id?: string; file_key?: string };
  bot?: { open_id?: string; app_name?: string };
}

/** An SDK error (axios underneath) or a non-zero `code` as data. */
export function feishuFailure(err: unknown): DeliveryFailure {
  const e = err as { response?: { status?: number; headers?: Record<string, unknown>; data?: Answer }; message?: string };
  if (e?.response?.status) {
    const { status, headers, data } = e.response;
    const reset = Number(headers?.['x-ogw-ratelimit-reset']);
    const after = Number.isFinite(reset) && reset > 0 ? reset * 1000 : undefined;
    const message = `HTTP ${status}${data?.code !== undefined ? ` code ${data.code}` : ''}${data?.msg ? `: ${data.msg}` : ''}`;
    if (data?.code === RATE_LIMITED) return { kind: 'rate_limited', retryAfterMs: after ?? 1000, message };
    return httpFailure(status, message, after);
  }
  return networkFailure(err);
}

function answerFailure(a: Answer): DeliveryFailure {
  const message = `code ${a.code}: ${a.msg ?? ''}`;
  return a.code === RATE_LIMITED ? { kind: 'rate_limited', retryAfterMs: 1000, message } : { kind: 'rejected', message };
}

async function result(p: Promise<Answer>, fallbackId?: string): Promise<SendResult> {
  try {
    const a = await p;
    if (a?.code !== undefined && a.code !== 0) return { ok: false, failure: answerFailure(a) };
    return { ok: true, messageId: a?.data?.message_id ?? fallbackId ?? '' };
  } catch (e) {
    return { ok: false, failure: feishuFailure(e) };
  }
}

/** A card (JSON 1.0) shared with everyone in the chat and updatable: the text as markdown, buttons below. */
export function cardOf(msg: OutboundMessage): string {
  const elements: unknown[] = [{ tag: 'markdown', content: msg.text }];
  for (const row of msg.buttons ?? []) {
    elements.push({
      tag: 'action',
      actions: row.map((b) => ({
        tag: 'button',
        text: { tag: 'plain_text', content: b.label },
        type: b.style === 'danger' ? 'danger' : b.style === 'primary' ? 'primary' : 'default',
        value: { runtrail: b.value },
      })),
    });
  }
  return JSON.stringify({ config: { wide_screen_mode: true, update_multi: true }, elements });
}

/** A text message's words, the bot's @mention removed. */
export function feishuText(
  content: string,
  mentions: Array<{ key: string; id?: { open_id?: string } }>,
  botOpenId: string,
): { text: string; mentioned: boolean } {
  let text = '';
  try {
    const c = JSON.parse(content) as { text?: unknown };
    text = typeof c.text === 'string' ? c.text : '';
  } catch {
    text = '';
  }
  let mentioned = false;
  for (const m of mentions) {
    if (m.id?.open_id !== botOpenId) continue;
    mentioned = true;
    text = text.split(m.key).join('');
  }
  return { text: text.replace(/[ \t]{2,}/g, ' ').trim(), mentioned };
}

async function botInfo(c: lark.Client, opts?: ReturnType<typeof lark.withTenantToken>): Promise<{ openId: string; name: string }> {
  const a = (await c.request({ method: 'GET', url: '/open-apis/bot/v3/info' }, opts)) as Answer;
  if (a.code !== 0 || !a.bot?.open_id) throw new Error(`bot info: code ${a.code}: ${a.msg ?? ''}`);
  return { openId: a.bot.open_id, name: a.bot.app_name ?? 'bot' };
}

export async function checkFeishu(config: Record<string, unknown>, signal: AbortSignal): Promise<ChannelCheck> {
  const s = settingsOf(config);
  try {
    const c = client(s, true);
    const t = (await c.auth.tenantAccessToken.internal({ data: { app_id: s.appId, app_secret: s.appSecret } })) as {
      code?: number;
      msg?: string;
      tenant_access_token?: string;
    };
    if (t.code !== 0 || !t.tenant_access_token) return { ok: false, error: `${s.domain}: tenant_access_token: code ${t.code}: ${t.msg ?? ''}` };
    const bot = await botInfo(c, lark.withTenantToken(t.tenant_access_token));
    if (signal.aborted) return { ok: false, error: 'timed out' };
    return { ok: true, detail: `bot ${bot.name} (${bot.openId}) at ${s.domain}` };
  } catch (e) {
    return { ok: false, error: `${s.domain}: ${(e as { response?: unknown }).response ? feishuFailure(e).message : (e as Error).message}` };
  }
}

interface ReceiveEvent {
  event_id?: string;
  sender?: { sender_id?: { open_id?: string }; sender_type?: string };
  message?: {
    message_id?: string;
    root_id?: string;
    parent_id?: string;
    thread_id?: string;
    chat_id?: string;
    chat_type?: string;
    message_type?: string;
    content?: string;
    mentions?: Array<{ key: string; id?: { open_id?: string }; name?: string }>;
  };
}

interface CardActionEvent {
  event_id?: string;
  operator?: { open_id?: string };
  action?: { value?: { runtrail?: unknown } };
  context?: { open_message_id?: string; open_chat_id?: string };
}

export async function startFeishu(ctx: ChannelContext): Promise<ChannelConnection> {
  const s = settingsOf(ctx.config);
  const api = client(s);
  const bot = await botInfo(api).catch((e: unknown) => {
    throw new Error(`${s.domain}: ${(e as { response?: unknown }).response ? feishuFailure(e).message : (e as Error).message}`);
  });
  /** Chats the bot has seen, by type: a press names only the chat. */
  const chatTypes = new Map<string, 'direct' | 'group'>();

  async function download(messageId: string, key: string, type: 'file' | 'image'): Promise<Uint8Array> {
    const r = await api.im.v1.messageResource.get({ params: { type }, path: { message_id: messageId, file_key: key } });
    const chunks: Buffer[] = [];
    for await (const c of r.getReadableStream()) chunks.push(Buffer.from(c as Buffer));
    return new Uint8Array(Buffer.concat(chunks));
  }

  function filesOf(messageId: string, type: string | undefined, content: string): InboundFile[] {
    try {
      const c = JSON.parse(content) as { file_key?: string; file_name?: string; image_key?: string };
      if (type === 'file' && c.file_key) return [{ name: c.file_name ?? c.file_key, download: () => download(messageId, c.file_key!, 'file') }];
      if (type === 'image' && c.image_key) return [{ name: `${c.image_key}.png`, download: () => download(messageId, c.image_key!, 'image') }];
    } catch {
      // not JSON: no file
    }
    return [];
  }

  async function onMessage(ev: ReceiveEvent): Promise<void> {
    const m = ev.message;
    const sender = ev.sender?.sender_id?.open_id;
    if (!m?.message_id || !m.chat_id || !sender || ev.sender?.sender_type !== 'user') return;
    const chatType = m.chat_type === 'p2p' ? 'direct' : 'group';
    chatTypes.set(m.chat_id, chatType);
    const { text, mentioned } =
      m.message_type === 'text'
        ? feishuText(m.content ?? '', m.mentions ?? [], bot.openId)
        : { text: '', mentioned: (m.mentions ?? []).some((x) => x.id?.open_id === bot.openId) };
    // a topic (thread) is its own conversation, answered under its first message
    const thread = m.thread_id && m.root_id ? { thread: m.root_id } : {};
    await ctx.receive({
      deliveryId: ev.event_id ?? m.message_id,
      messageId: m.message_id,
      to: { chat: m.chat_id, ...thread },
      chatType,
      sender: { id: sender },
      text,
      addressed: mentioned,
      ...(m.parent_id ? { replyTo: m.parent_id } : {}),
      files: filesOf(m.message_id, m.message_type, m.content ?? ''),
    });
  }

  async function onCardAction(ev: CardActionEvent): Promise<unknown> {
    const value = ev.action?.value?.runtrail;
    const chat = ev.context?.open_chat_id;
    const messageId = ev.context?.open_message_id;
    const user = ev.operator?.open_id;
    if (typeof value !== 'string' || !chat || !messageId || !user) return { toast: { type: 'info', content: 'This button does nothing.' } };
    const answer = await ctx.press({
      deliveryId: ev.event_id ?? `${messageId}:${user}:${value}`,
      messageId,
      to: { chat },
      chatType: chatTypes.get(chat) ?? 'group',
      sender: { id: user },
      value,
    });
    return { toast: { type: /^not allowed/i.test(answer.text) ? 'error' : 'info', content: answer.text } };
  }

  const dispatcher = new lark.EventDispatcher({ loggerLevel: lark.LoggerLevel.error, logger: quiet }).register({
    'im.message.receive_v1': async (data: ReceiveEvent) => {
      await onMessage(data).catch((e: unknown) => ctx.log('error', `a message could not be handled: ${(e as Error)?.message ?? String(e)}`));
    },
    'card.action.trigger': (data: CardActionEvent) => onCardAction(data),
  } as never);

  let socket: lark.WSClient | null = null;
  const ready = new Promise<void>((resolve, reject) => {
    const ws = new lark.WSClient({
      appId: s.appId,
      appSecret: s.appSecret,
      domain: s.domain,
      loggerLevel: lark.LoggerLevel.error,
      logger: quiet,
      autoReconnect: true,
      onReady: () => {
        ctx.status({ connected: true });
        resolve();
      },
      onError: (e: Error) => {
        ctx.status({ connected: false, error: `long connection: ${e.message}` });
        reject(e);
      },
      onReconnecting: () => ctx.status({ connected: false, error: 'long connection lost; reconnecting' }),
      onReconnected: () => ctx.status({ connected: true }),
    });
    socket = ws;
    void ws.start({ eventDispatcher: dispatcher });
  });
  await Promise.race([
    ready,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`long connection to ${s.domain} not ready within 30 s`)), 30_000).unref()),
  ]).catch((e: unknown) => {
    socket?.close({ force: true });
    throw e;
  });
  const onAbort = () => socket?.close({ force: true });
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  /** A new card: a reply to a message (in its thread when the chat is a topic), or a message to the chat. */
  function post(to: ChatAddress, msgType: 'interactive' | 'file', content: string, key: string, replyTo?: string): Promise<SendResult> {
    const under = to.thread ?? replyTo;
    if (under)
      return result(
        api.im.v1.message.reply({
          path: { message_id: under },
          data: { msg_type: msgType, content, uuid: key, reply_in_thread: Boolean(to.thread) },
        }) as Promise<Answer>,
      );
    return result(
      api.im.v1.message.create({
        params: { receive_id_type: 'chat_id' },
        data: { receive_id: to.chat, msg_type: msgType, content, uuid: key },
      }) as Promise<Answer>,
    );
  }

  return {
    textLimit: FEISHU_TEXT_LIMIT,
    sendsAreKeyed: true,
    editIntervalMs: () => s.editIntervalMs,
    send: (to, msg, opts) => post(to, 'interactive', cardOf(msg), opts.key, opts.replyTo),
    edit: (_to, messageId, msg) =>
      result(api.im.v1.message.patch({ path: { message_id: messageId }, data: { content: cardOf(msg) } }) as Promise<Answer>, messageId),
    async sendFile(to, file, opts) {
      if (file.bytes > UPLOAD_LIMIT)
        return {
          ok: false,
          failure: { kind: 'rejected', message: `${file.name} is ${Math.ceil(file.bytes / 1024 / 1024)} MB; Feishu takes files up to 30 MB` },
        };
      let key: string | undefined;
      try {
        const up = (await api.im.v1.file.create({ data: { file_type: 'stream', file_name: file.name, file: createReadStream(file.path) } })) as Answer | null;
        if (up && up.code !== undefined && up.code !== 0) return { ok: false, failure: answerFailure(up) };
        key = up?.data?.file_key ?? (up as { file_key?: string } | null)?.file_key;
      } catch (e) {
        return { ok: false, failure: feishuFailure(e) };
      }
      if (!key) return { ok: false, failure: { kind: 'unavailable', landed: 'no', message: 'the upload gave no file_key' } };
      // uploading again makes another file_key but posts nothing: the post is what the uuid keeps single
      return post(to, 'file', JSON.stringify({ file_key: key }), opts.key, opts.replyTo);
    },
    async stop() {
      ctx.signal.removeEventListener('abort', onAbort);
      socket?.close({ force: true });
    },
  };
}
