/**
 * A Telegram Bot API server of our own, on loopback, built from the Bot API reference
 * (core.telegram.org/bots/api): the methods the channel calls, the `{ ok, result }` /
 * `{ ok: false, error_code, description, parameters }` envelopes, getUpdates long polling with its
 * offset, the 4,096-character text limit, "message is not modified", 401 for a wrong token, and
 * file downloads under /file/bot<token>/. Tests queue updates and faults, and read every request made.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FaultQueue, LoopbackServer } from './loopback-server.js';

export interface TgRequest {
  method: string;
  params: Record<string, unknown>;
  /** a multipart upload's file */
  file?: { field: string; name: string; bytes: number; text: string };
  at: number;
}

export interface TgMessage {
  message_id: number;
  chat_id: number;
  text?: string;
  reply_markup?: unknown;
  document?: { file_name: string; text: string };
  edits: number;
}

/** The parts of a multipart/form-data body (RFC 7578): name, filename when it is a file, and the bytes. */
export function multipartParts(body: Buffer, contentType: string): Array<{ name: string; filename?: string; data: Buffer }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) throw new Error('multipart body without a boundary');
  const delim = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const out: Array<{ name: string; filename?: string; data: Buffer }> = [];
  let at = body.indexOf(delim);
  while (at >= 0) {
    const start = at + delim.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delim, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // after CRLF, before the CRLF that ends the part
    const headEnd = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, headEnd).toString('utf8');
    const name = /content-disposition:[^\r\n]*?;\s*name="([^"]*)"/i.exec(head);
    const filename = /content-disposition:[^\r\n]*?;\s*filename=(?:"([^"]*)"|([^;\r\n]+))/i.exec(head);
    if (name) out.push({ name: name[1], ...(filename ? { filename: filename[1] ?? filename[2] } : {}), data: part.subarray(headEnd + 4) });
    at = next;
  }
  return out;
}

type Fault = { error_code: number; description: string; parameters?: Record<string, unknown> };

export class FakeTelegram {
  readonly token: string;
  readonly botId = 7000001;
  readonly botUsername = 'runtrail_test_bot';
  readonly requests: TgRequest[] = [];
  /** what the bot posted, by chat */
  readonly chats = new Map<number, TgMessage[]>();
  private readonly http = new LoopbackServer();
  private updates: Array<Record<string, unknown> & { update_id: number }> = [];
  private nextUpdateId = 100;
  private nextMessageId = 1;
  private waiters: Array<() => void> = [];
  private readonly faults = new FaultQueue<Fault>();
  private readonly files = new Map<string, { path: string; bytes: Buffer }>();

  constructor(token = '123456:TEST-fake-token_abc') {
    this.token = token;
  }

  start(): Promise<string> {
    return this.http.start((req, res) => this.route(req, res));
  }

  get url(): string {
    return this.http.url;
  }

  async stop(): Promise<void> {
    for (const w of this.waiters.splice(0)) w();
    await this.http.stop();
  }

  /** The next call(s) of `method` fail with this Bot API error. */
  failNext(method: string, fault: Fault, times = 1): void {
    this.faults.add(method, fault, times);
  }

  private push(update: Record<string, unknown>, id?: number): number {
    const update_id = id ?? this.nextUpdateId++;
    this.updates.push({ update_id, ...update });
    for (const w of this.waiters.splice(0)) w();
    return update_id;
  }

  /** A person writes to the bot. Returns the update (its update_id can be delivered again with `redeliver`). */
  userMessage(o: {
    chatId: number;
    from: number;
    text?: string;
    group?: boolean;
    mention?: boolean;
    replyTo?: number;
    document?: { name: string; content: string };
  }): { update_id: number; message_id: number } {
    const message_id = this.nextMessageId++;
    let text = o.text ?? '';
    const entities: unknown[] = [];
    if (o.mention) {
      const m = `@${this.botUsername}`;
      text = `${m} ${text}`;
      entities.push({ type: 'mention', offset: 0, length: m.length });
    }
    const command = /^\/\w+/.exec(text.replace(/^@\S+ /, ''));
    if (command) entities.push({ type: 'bot_command', offset: text.indexOf(command[0]), length: command[0].length });
    const message: Record<string, unknown> = {
      message_id,
      date: Math.floor(Date.now() / 1000),
      chat: o.group ? { id: o.chatId, type: 'supergroup', title: 'Team' } : { id: o.chatId, type: 'private', first_name: 'User' },
      from: { id: o.from, is_bot: false, first_name: `User${o.from}`, username: `user${o.from}` },
    };
    if (o.document) {
      const file_id = `doc_${message_id}`;
      this.files.set(file_id, { path: `documents/${o.document.name}`, bytes: Buffer.from(o.document.content) });
      message.document = { file_id, file_unique_id: `u${file_id}`, file_name: o.document.name, file_size: Buffer.byteLength(o.document.content) };
      if (text) message.caption = text;
      if (entities.length) message.caption_entities = entities;
    } else {
      message.text = text;
      if (entities.length) message.entities = entities;
    }
    if (o.replyTo !== undefined) {
      const mine = this.chats.get(o.chatId)?.find((m) => m.message_id === o.replyTo);
      message.reply_to_message = {
        message_id: o.replyTo,
        chat: message.chat,
        date: 0,
        from: mine ? { id: this.botId, is_bot: true, first_name: 'Bot', username: this.botUsername } : { id: o.from, is_bot: false, first_name: 'x' },
        text: mine?.text ?? '',
      };
    }
    const update_id = this.push({ message });
    return { update_id, message_id };
  }

  /** A person presses an inline keyboard button of one of the bot's messages. */
  press(o: { chatId: number; from: number; messageId: number; data: string; group?: boolean }): number {
    const mine = this.chats.get(o.chatId)?.find((m) => m.message_id === o.messageId);
    return this.push({
      callback_query: {
        id: `cq_${this.nextUpdateId}`,
        from: { id: o.from, is_bot: false, first_name: `User${o.from}`, username: `user${o.from}` },
        chat_instance: 'ci',
        data: o.data,
        message: {
          message_id: o.messageId,
          date: 0,
          chat: o.group ? { id: o.chatId, type: 'supergroup', title: 'Team' } : { id: o.chatId, type: 'private', first_name: 'User' },
          text: mine?.text ?? '',
        },
      },
    });
  }

  /** The same update delivered again, as Telegram does when the offset was not confirmed. */
  redeliver(updateId: number, update: Record<string, unknown>): void {
    this.push(update, updateId);
  }

  /** The update that was queued with this id (to deliver it again). */
  updateBody(updateId: number): Record<string, unknown> {
    const u = this.delivered.find((x) => x.update_id === updateId);
    if (!u) throw new Error(`no update ${updateId}`);
    const { update_id: _id, ...rest } = u;
    return rest;
  }

  private delivered: Array<Record<string, unknown> & { update_id: number }> = [];

  calls(method: string): TgRequest[] {
    return this.requests.filter((r) => r.method === method);
  }

  messagesIn(chatId: number): TgMessage[] {
    return this.chats.get(chatId) ?? [];
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private error(res: ServerResponse, f: Fault): void {
    this.reply(res, f.error_code, { ok: false, ...f });
  }

  private async params(req: IncomingMessage, url: URL): Promise<{ params: Record<string, unknown>; file?: TgRequest['file'] }> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('application/json') && body.length) Object.assign(params, JSON.parse(body.toString('utf8')));
    if (type.startsWith('multipart/form-data')) {
      let file: TgRequest['file'];
      for (const part of multipartParts(body, type)) {
        if (part.filename === undefined) {
          const v = part.data.toString('utf8');
          params[part.name] = /^[[{]/.test(v) ? JSON.parse(v) : v;
        } else file = { field: part.name, name: part.filename, bytes: part.data.length, text: part.data.toString('utf8') };
      }
      // grammY names a file field by a random id and puts `attach://<id>` in the parameter
      for (const [k, v] of Object.entries(params)) if (typeof v === 'string' && file && v === `attach://${file.field}`) params[k] = file;
      return { params, file };
    }
    return { params };
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      const f = [...this.files.values()].find((x) => x.path === decodeURIComponent(file[2]));
      if (file[1] !== this.token || !f) return this.reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(f.bytes);
      return;
    }
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!m) return this.reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const { params, file: upload } = await this.params(req, url);
    const method = m[2];
    this.requests.push({ method, params, ...(upload ? { file: upload } : {}), at: Date.now() });
    if (m[1] !== this.token) return this.error(res, { error_code: 401, description: 'Unauthorized' });
    const fault = this.faults.take((k) => k === method);
    if (fault) return this.error(res, fault);
    switch (method) {
      case 'getMe':
        return this.reply(res, 200, { ok: true, result: { id: this.botId, is_bot: true, first_name: 'Runtrail', username: this.botUsername } });
      case 'getUpdates':
        return this.getUpdates(params, res);
      case 'sendMessage':
      case 'sendDocument':
        return this.send(method, params, res);
      case 'editMessageText':
        return this.edit(params, res);
      case 'answerCallbackQuery':
        return this.reply(res, 200, { ok: true, result: true });
      case 'getFile': {
        const f = this.files.get(String(params.file_id));
        if (!f) return this.error(res, { error_code: 400, description: 'Bad Request: invalid file_id' });
        return this.reply(res, 200, {
          ok: true,
          result: { file_id: params.file_id, file_unique_id: `u${String(params.file_id)}`, file_size: f.bytes.length, file_path: f.path },
        });
      }
      default:
        return this.error(res, { error_code: 404, description: 'Not Found: method not found' });
    }
  }

  private async getUpdates(params: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const offset = params.offset === undefined ? undefined : Number(params.offset);
    // an offset confirms every update before it: they are forgotten
    if (offset !== undefined) this.updates = this.updates.filter((u) => u.update_id >= offset);
    const timeoutS = Number(params.timeout ?? 0);
    if (!this.updates.length && timeoutS > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(timeoutS, 2) * 1000);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (res.destroyed) return;
    const out = [...this.updates].sort((a, b) => a.update_id - b.update_id);
    for (const u of out) if (!this.delivered.some((d) => d.update_id === u.update_id)) this.delivered.push(u);
    this.reply(res, 200, { ok: true, result: out });
  }

  private send(method: string, params: Record<string, unknown>, res: ServerResponse): void {
    const chat_id = Number(params.chat_id);
    if (method === 'sendMessage') {
      const text = String(params.text ?? '');
      if (!text.trim()) return this.error(res, { error_code: 400, description: 'Bad Request: message text is empty' });
      if (text.length > 4096) return this.error(res, { error_code: 400, description: 'Bad Request: message is too long' });
    }
    const doc = params.document as TgRequest['file'] | undefined;
    const msg: TgMessage = {
      message_id: this.nextMessageId++,
      chat_id,
      ...(params.text !== undefined ? { text: String(params.text) } : {}),
      ...(params.reply_markup !== undefined ? { reply_markup: params.reply_markup } : {}),
      ...(doc ? { document: { file_name: doc.name, text: doc.text } } : {}),
      edits: 0,
    };
    const list = this.chats.get(chat_id) ?? [];
    list.push(msg);
    this.chats.set(chat_id, list);
    this.reply(res, 200, {
      ok: true,
      result: {
        message_id: msg.message_id,
        date: 0,
        chat: { id: chat_id, type: chat_id < 0 ? 'supergroup' : 'private' },
        ...(msg.text !== undefined ? { text: msg.text } : {}),
        ...(doc ? { document: { file_id: `f${msg.message_id}`, file_unique_id: `uf${msg.message_id}`, file_name: doc.name } } : {}),
      },
    });
  }

  private edit(params: Record<string, unknown>, res: ServerResponse): void {
    const chat_id = Number(params.chat_id);
    const msg = this.chats.get(chat_id)?.find((x) => x.message_id === Number(params.message_id));
    if (!msg) return this.error(res, { error_code: 400, description: 'Bad Request: message to edit not found' });
    const text = String(params.text ?? '');
    if (!text.trim()) return this.error(res, { error_code: 400, description: 'Bad Request: message text is empty' });
    if (text.length > 4096) return this.error(res, { error_code: 400, description: 'Bad Request: MESSAGE_TOO_LONG' });
    const markup = params.reply_markup;
    if (text === msg.text && JSON.stringify(markup ?? null) === JSON.stringify(msg.reply_markup ?? null)) {
      return this.error(res, {
        error_code: 400,
        description:
          'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      });
    }
    msg.text = text;
    // no markup, or an empty keyboard, leaves the message without buttons
    if (markup === undefined || (markup as { inline_keyboard?: unknown[] }).inline_keyboard?.length === 0) delete msg.reply_markup;
    else msg.reply_markup = markup;
    msg.edits++;
    this.reply(res, 200, { ok: true, result: { message_id: msg.message_id, date: 0, chat: { id: chat_id, type: 'private' }, text } });
  }
}
