/**
 * Telegram, translated: updates from `getUpdates` become InboundMessage / InboundPress, and the
 * connection's sends become sendMessage, editMessageText and sendDocument. Bot API errors become
 * DeliveryFailures (429 with `parameters.retry_after`, 5xx, network) for the host's retry policy.
 */
import { Api, GrammyError, HttpError, InputFile } from 'grammy';
import type { CallbackQuery, Message, MessageEntity, Update, UserFromGetMe } from 'grammy/types';
import { backoffDelay, sleep } from '../backoff.js';
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
import { networkFailure } from '../network-failure.js';

/** The longest text one message of the service may carry. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** Telegram's limits: files a bot may upload (50 MB) and download through the cloud Bot API (20 MB). */
const UPLOAD_LIMIT = 50 * 1024 * 1024;

interface TelegramSettings {
  token: string;
  apiRoot: string;
  pollTimeoutS: number;
  editIntervalMs: number;
  groupEditIntervalMs: number;
}

function settingsOf(c: Record<string, unknown>): TelegramSettings {
  return {
    token: String(c.token),
    apiRoot: typeof c.api_root === 'string' ? c.api_root : 'https://api.telegram.org',
    pollTimeoutS: typeof c.poll_timeout_s === 'number' ? c.poll_timeout_s : 25,
    editIntervalMs: typeof c.edit_interval_ms === 'number' ? c.edit_interval_ms : 1000,
    groupEditIntervalMs: typeof c.group_edit_interval_ms === 'number' ? c.group_edit_interval_ms : 3000,
  };
}

/** A Bot API error as data. */
export function telegramFailure(err: unknown): DeliveryFailure {
  if (err instanceof GrammyError) {
    const retryAfterMs = typeof err.parameters.retry_after === 'number' ? err.parameters.retry_after * 1000 : undefined;
    if (err.error_code === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs ?? 1000, message: err.description };
    if (err.error_code >= 500)
      return { kind: 'unavailable', landed: 'maybe', message: err.description, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    return { kind: 'rejected', message: err.description };
  }
  if (err instanceof HttpError) return networkFailure(err.error);
  return networkFailure(err);
}

function chatId(to: ChatAddress): number | string {
  return /^-?\d+$/.test(to.chat) ? Number(to.chat) : to.chat;
}

function threadOf(to: ChatAddress): { message_thread_id?: number } {
  return to.thread && /^\d+$/.test(to.thread) ? { message_thread_id: Number(to.thread) } : {};
}

function markupOf(msg: OutboundMessage) {
  if (!msg.buttons) return {};
  return { reply_markup: { inline_keyboard: msg.buttons.map((row) => row.map((b) => ({ text: b.label, callback_data: b.value }))) } };
}

/** The text without the bot's @mention (or a /command@bot suffix), and whether it named the bot. */
export function withoutMention(text: string, entities: readonly MessageEntity[], me: UserFromGetMe): { text: string; mentioned: boolean } {
  const name = `@${me.username}`.toLowerCase();
  const cuts: Array<[number, number]> = [];
  for (const e of entities) {
    const part = text.slice(e.offset, e.offset + e.length);
    if (e.type === 'mention' && part.toLowerCase() === name) cuts.push([e.offset, e.offset + e.length]);
    else if (e.type === 'text_mention' && e.user.id === me.id) cuts.push([e.offset, e.offset + e.length]);
    else if (e.type === 'bot_command' && part.toLowerCase().endsWith(name)) cuts.push([e.offset + e.length - name.length, e.offset + e.length]);
  }
  let out = text;
  for (const [a, b] of cuts.sort((x, y) => y[0] - x[0])) out = out.slice(0, a) + out.slice(b);
  return { text: out.replace(/[ \t]{2,}/g, ' ').trim(), mentioned: cuts.length > 0 };
}

function senderName(u: { username?: string; first_name?: string; last_name?: string }): string | undefined {
  return u.username ? `@${u.username}` : [u.first_name, u.last_name].filter(Boolean).join(' ') || undefined;
}

/** getMe with the configured token and API root: the bot's name, or why not. */
export async function checkTelegram(config: Record<string, unknown>, signal: AbortSignal): Promise<ChannelCheck> {
  const s = settingsOf(config);
  try {
    const me = await new Api(s.token, { apiRoot: s.apiRoot, timeoutSeconds: 15 }).getMe(signal as unknown as Parameters<Api['getMe']>[0]);
    return { ok: true, detail: `bot @${me.username} (id ${me.id}) at ${s.apiRoot}` };
  } catch (e) {
    return { ok: false, error: `${s.apiRoot}: ${telegramFailure(e).message}` };
  }
}

export async function startTelegram(ctx: ChannelContext): Promise<ChannelConnection> {
  const s = settingsOf(ctx.config);
  // the poll waits up to pollTimeoutS for updates; a request that takes much longer is a dead connection
  const api = new Api(s.token, { apiRoot: s.apiRoot, timeoutSeconds: s.pollTimeoutS + 30 });
  const me = await api.getMe().catch((e: unknown) => {
    throw new Error(`getMe at ${s.apiRoot}: ${telegramFailure(e).message}`);
  });
  const stopping = new AbortController();
  const onAbort = () => stopping.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  async function download(fileId: string): Promise<Uint8Array> {
    const f = await api.getFile(fileId);
    if (!f.file_path) throw new Error('Telegram gave no path for the file (larger than 20 MB?)');
    const res = await fetch(`${s.apiRoot}/file/bot${s.token}/${f.file_path}`, { signal: stopping.signal });
    if (!res.ok) throw new Error(`downloading the file failed: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  function filesOf(m: Message): InboundFile[] {
    const out: InboundFile[] = [];
    if (m.document) {
      const d = m.document;
      out.push({ name: d.file_name ?? `document_${d.file_unique_id}`, ...(d.file_size ? { bytes: d.file_size } : {}), download: () => download(d.file_id) });
    }
    if (m.photo?.length) {
      const p = m.photo[m.photo.length - 1];
      out.push({ name: `photo_${p.file_unique_id}.jpg`, ...(p.file_size ? { bytes: p.file_size } : {}), download: () => download(p.file_id) });
    }
    return out;
  }

  function addressOf(m: Message): { to: ChatAddress; chatType: ChatType } {
    const thread = m.is_topic_message && m.message_thread_id ? { thread: String(m.message_thread_id) } : {};
    return { to: { chat: String(m.chat.id), ...thread }, chatType: m.chat.type === 'private' ? 'direct' : 'group' };
  }

  async function onMessage(updateId: number, m: Message): Promise<void> {
    if (!m.from || m.from.is_bot) return;
    const { text, mentioned } = withoutMention(m.text ?? m.caption ?? '', m.entities ?? m.caption_entities ?? [], me);
    const repliesToBot = m.reply_to_message?.from?.id === me.id;
    await ctx.receive({
      deliveryId: String(updateId),
      messageId: String(m.message_id),
      ...addressOf(m),
      sender: { id: String(m.from.id), ...(senderName(m.from) ? { name: senderName(m.from) } : {}) },
      text,
      addressed: mentioned || repliesToBot,
      ...(m.reply_to_message ? { replyTo: String(m.reply_to_message.message_id) } : {}),
      files: filesOf(m),
    });
  }

  async function onPress(updateId: number, q: CallbackQuery): Promise<void> {
    const m = q.message;
    if (!m || !('chat' in m) || !q.data) {
      await api.answerCallbackQuery(q.id).catch(() => undefined);
      return;
    }
    const answer = await ctx.press({
      deliveryId: String(updateId),
      messageId: String(m.message_id),
      ...addressOf(m as Message),
      sender: { id: String(q.from.id), ...(senderName(q.from) ? { name: senderName(q.from) } : {}) },
      value: q.data,
    });
    // a callback answer shows at most 200 characters
    await api
      .answerCallbackQuery(q.id, { text: answer.text.slice(0, 200) })
      .catch((e: unknown) => ctx.log('warn', `answerCallbackQuery failed: ${telegramFailure(e).message}`));
  }

  async function handle(u: Update): Promise<void> {
    if (u.message) await onMessage(u.update_id, u.message);
    else if (u.callback_query) await onPress(u.update_id, u.callback_query);
  }

  // grammY's types name the abort-controller package's AbortSignal; Node's own is the same at run time
  const pollSignal = stopping.signal as unknown as Parameters<typeof api.getUpdates>[1];

  /** Long polling: the offset confirms what was handled, and is kept so a restart asks only for the rest. */
  async function poll(): Promise<void> {
    const kept = ctx.store.get('offset');
    let offset = typeof kept === 'number' ? kept : undefined;
    let failures = 0;
    ctx.status({ connected: true });
    while (!stopping.signal.aborted) {
      let updates: Update[];
      try {
        updates = await api.getUpdates(
          { ...(offset !== undefined ? { offset } : {}), timeout: s.pollTimeoutS, allowed_updates: ['message', 'callback_query'] },
          pollSignal,
        );
      } catch (e) {
        if (stopping.signal.aborted) break;
        failures++;
        const f = telegramFailure(e);
        ctx.status({ connected: false, error: `getUpdates: ${f.message}` });
        await sleep(f.kind === 'rate_limited' ? f.retryAfterMs : backoffDelay(failures, { baseMs: 1000, capMs: 60_000 }), stopping.signal);
        continue;
      }
      if (failures) ctx.status({ connected: true });
      failures = 0;
      for (const u of updates) {
        await handle(u);
        offset = u.update_id + 1;
      }
      if (updates.length) await ctx.store.set('offset', offset);
    }
  }
  const polling = poll().catch((e: unknown) => ctx.status({ connected: false, error: `polling stopped: ${(e as Error)?.message ?? String(e)}` }));

  const result = async (p: Promise<Message | true>, messageId?: string): Promise<SendResult> => {
    try {
      const m = await p;
      return { ok: true, messageId: m === true ? (messageId ?? '') : String(m.message_id) };
    } catch (e) {
      if (messageId && e instanceof GrammyError && /message is not modified/i.test(e.description)) return { ok: true, messageId };
      return { ok: false, failure: telegramFailure(e) };
    }
  };

  return {
    textLimit: TELEGRAM_TEXT_LIMIT,
    sendsAreKeyed: false,
    editIntervalMs: (_to, chatType) => (chatType === 'group' ? s.groupEditIntervalMs : s.editIntervalMs),
    send: (to, msg, opts) =>
      result(
        api.sendMessage(chatId(to), msg.text, {
          ...threadOf(to),
          ...markupOf(msg),
          ...(opts.replyTo && /^\d+$/.test(opts.replyTo) ? { reply_parameters: { message_id: Number(opts.replyTo), allow_sending_without_reply: true } } : {}),
          link_preview_options: { is_disabled: true },
        }),
      ),
    edit: (to, messageId, msg) =>
      result(api.editMessageText(chatId(to), Number(messageId), msg.text, { ...markupOf(msg), link_preview_options: { is_disabled: true } }), messageId),
    async sendFile(to, file, opts) {
      if (file.bytes > UPLOAD_LIMIT)
        return {
          ok: false,
          failure: { kind: 'rejected', message: `${file.name} is ${Math.ceil(file.bytes / 1024 / 1024)} MB; a Telegram bot may send at most 50 MB` },
        };
      return result(
        api.sendDocument(chatId(to), new InputFile(file.path, file.name), {
          ...threadOf(to),
          ...(opts.replyTo && /^\d+$/.test(opts.replyTo) ? { reply_parameters: { message_id: Number(opts.replyTo), allow_sending_without_reply: true } } : {}),
        }),
      );
    },
    async stop() {
      stopping.abort();
      ctx.signal.removeEventListener('abort', onAbort);
      await polling;
    },
  };
}
