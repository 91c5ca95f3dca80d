/**
 * A Feishu open platform of our own, on loopback, built from its published server API reference
 * (open.feishu.cn/document/server-docs): tenant_access_token, bot info, sending (create and reply,
 * de-duplicated by `uuid` for an hour), updating a card (PATCH, only cards with `update_multi`),
 * file upload and message resources, `{ code, msg, data }` answers, and rate limits as HTTP 429 with
 * code 99991400 and `x-ogw-ratelimit-reset`. The long connection is what the SDK speaks: an endpoint
 * that hands out a WebSocket URL, then protobuf frames (pbbp2.Frame) carrying event JSON, each
 * answered by the app with a frame of its own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { multipartParts } from './fake-telegram.js';
import { FaultQueue, LoopbackServer } from './loopback-server.js';

export interface FsCall {
  method: string;
  path: string;
  body: Record<string, unknown>;
  at: number;
}

export interface FsMessage {
  message_id: string;
  chat_id: string;
  msg_type: string;
  /** the card's markdown, or a file's name */
  text: string;
  card?: {
    config?: { update_multi?: boolean };
    elements: Array<{ tag: string; content?: string; actions?: Array<{ text: { content: string }; type: string; value: Record<string, unknown> }> }>;
  };
  reply_to?: string;
  in_thread?: boolean;
  uuid?: string;
  updates: number;
  file?: { name: string; text: string };
}

interface Frame {
  SeqID: number;
  LogID: number;
  service: number;
  method: number;
  headers: Array<{ key: string; value: string }>;
  payload?: Buffer;
}

// protobuf wire format (varints and length-delimited fields), enough for pbbp2.Frame and its Header
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return Buffer.from(out);
}
const field = (no: number, wire: number) => varint(no * 8 + wire);
const bytesField = (no: number, b: Buffer) => Buffer.concat([field(no, 2), varint(b.length), b]);

export function encodeFrame(f: Frame): Buffer {
  const parts = [field(1, 0), varint(f.SeqID), field(2, 0), varint(f.LogID), field(3, 0), varint(f.service), field(4, 0), varint(f.method)];
  for (const h of f.headers) parts.push(bytesField(5, Buffer.concat([bytesField(1, Buffer.from(h.key)), bytesField(2, Buffer.from(h.value))])));
  if (f.payload) parts.push(bytesField(8, f.payload));
  return Buffer.concat(parts);
}

function readVarint(b: Buffer, at: number): [number, number] {
  let n = 0;
  let mul = 1;
  let i = at;
  for (;;) {
    const byte = b[i++];
    n += (byte & 0x7f) * mul;
    if (byte < 0x80) return [n, i];
    mul *= 128;
  }
}

function fields(b: Buffer): Array<{ no: number; value: number | Buffer }> {
  const out: Array<{ no: number; value: number | Buffer }> = [];
  let i = 0;
  while (i < b.length) {
    const [tag, a] = readVarint(b, i);
    const no = Math.floor(tag / 8);
    if (tag % 8 === 0) {
      const [v, next] = readVarint(b, a);
      out.push({ no, value: v });
      i = next;
    } else {
      const [len, start] = readVarint(b, a);
      out.push({ no, value: b.subarray(start, start + len) });
      i = start + len;
    }
  }
  return out;
}

export function decodeFrame(b: Buffer): Frame {
  const f: Frame = { SeqID: 0, LogID: 0, service: 0, method: 0, headers: [] };
  for (const { no, value } of fields(b)) {
    if (no === 1) f.SeqID = value as number;
    else if (no === 2) f.LogID = value as number;
    else if (no === 3) f.service = value as number;
    else if (no === 4) f.method = value as number;
    else if (no === 5) {
      const h = fields(value as Buffer);
      f.headers.push({ key: String(h.find((x) => x.no === 1)?.value ?? ''), value: String(h.find((x) => x.no === 2)?.value ?? '') });
    } else if (no === 8) f.payload = value as Buffer;
  }
  return f;
}

export class FakeFeishu {
  readonly appId = 'cli_a1b2c3d4e5f60718';
  readonly appSecret = 'fake-app-secret-value';
  readonly botOpenId = 'ou_bot000001';
  readonly calls: FsCall[] = [];
  readonly messages: FsMessage[] = [];
  /** what the app answered to each pushed frame, by its message_id header */
  readonly answers = new Map<string, { code: number; data?: unknown }>();
  private readonly http = new LoopbackServer();
  private seq = 0;
  private readonly token = 't-fake-tenant-token';
  private readonly faults = new FaultQueue<{ status: number; reset?: number; code?: number }>();
  private readonly files = new Map<string, { name: string; bytes: Buffer }>();
  private readonly resources = new Map<string, Buffer>();
  private readonly userChats = new Map<string, string>();
  /** sockets whose client has pinged: the SDK listens for events only after its socket opened, so
   * a frame pushed the moment the server side opens can arrive before anyone listens */
  private readonly pinged = new WeakSet<WebSocket>();

  start(): Promise<string> {
    return this.http.start((req, res) => this.route(req, res), { path: '/ws', onSocket: (ws) => this.onSocket(ws) });
  }

  get url(): string {
    return this.http.url;
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  /** Long connections ready for events (their client has sent its first ping). */
  get connected(): number {
    return this.http.open.filter((ws) => this.pinged.has(ws)).length;
  }

  /** The next call(s) of `METHOD /path-prefix` fail: 429 with code 99991400 and a reset, or a 5xx. */
  failNext(route: string, fault: { status: number; reset?: number; code?: number }, times = 1): void {
    this.faults.add(route, fault, times);
  }

  private onSocket(ws: WebSocket): void {
    ws.on('message', (data) => {
      const f = decodeFrame(Buffer.from(data as Buffer));
      const type = f.headers.find((h) => h.key === 'type')?.value;
      if (f.method === 0 && type === 'ping') {
        this.pinged.add(ws);
        ws.send(
          encodeFrame({
            SeqID: 0,
            LogID: 0,
            service: f.service,
            method: 0,
            headers: [{ key: 'type', value: 'pong' }],
            payload: Buffer.from(JSON.stringify({ PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 1, ReconnectNonce: 0 })),
          }),
        );
        return;
      }
      const id = f.headers.find((h) => h.key === 'message_id')?.value;
      if (id && f.payload) this.answers.set(id, JSON.parse(f.payload.toString('utf8')) as { code: number; data?: unknown });
    });
  }

  /** Pushes one event (schema 2.0) down the long connection; returns the frame's message_id. */
  push(eventType: string, event: unknown, eventId = `ev_${++this.seq}`): string {
    const frameId = `frame_${++this.seq}`;
    const payload = Buffer.from(
      JSON.stringify({
        schema: '2.0',
        header: { event_id: eventId, event_type: eventType, create_time: String(Date.now()), token: '', app_id: this.appId, tenant_key: 'tk' },
        event,
      }),
    );
    const frame = encodeFrame({
      SeqID: 0,
      LogID: 0,
      service: 33,
      method: 1,
      headers: [
        { key: 'type', value: 'event' },
        { key: 'message_id', value: frameId },
        { key: 'sum', value: '1' },
        { key: 'seq', value: '0' },
        { key: 'trace_id', value: `tr_${this.seq}` },
      ],
      payload,
    });
    for (const ws of this.http.open) ws.send(frame);
    return frameId;
  }

  /** A person writes (text, or a file); in a group `mention` @-mentions the bot. */
  userMessage(o: {
    chat: string;
    user: string;
    text?: string;
    group?: boolean;
    mention?: boolean;
    parentId?: string;
    file?: { name: string; content: string };
    eventId?: string;
  }): { event_id: string; message_id: string; event: unknown } {
    const message_id = `om_user_${++this.seq}`;
    const mentions = o.mention
      ? [{ key: '@_user_1', id: { open_id: this.botOpenId, user_id: 'bot', union_id: 'on_bot' }, name: 'Runtrail', tenant_key: 'tk' }]
      : [];
    let message_type = 'text';
    let content = JSON.stringify({ text: `${o.mention ? '@_user_1 ' : ''}${o.text ?? ''}` });
    if (o.file) {
      const file_key = `file_v2_${++this.seq}`;
      this.resources.set(`${message_id}/${file_key}`, Buffer.from(o.file.content));
      message_type = 'file';
      content = JSON.stringify({ file_key, file_name: o.file.name });
    }
    const event = {
      sender: { sender_id: { open_id: o.user, user_id: o.user.replace('ou_', ''), union_id: `on_${o.user}` }, sender_type: 'user', tenant_key: 'tk' },
      message: {
        message_id,
        ...(o.parentId ? { parent_id: o.parentId, root_id: o.parentId } : {}),
        create_time: String(Date.now()),
        chat_id: o.chat,
        chat_type: o.group ? 'group' : 'p2p',
        message_type,
        content,
        mentions,
      },
    };
    const event_id = o.eventId ?? `ev_${++this.seq}`;
    this.userChats.set(message_id, o.chat);
    this.push('im.message.receive_v1', event, event_id);
    return { event_id, message_id, event };
  }

  /** A person presses a card button; returns the frame id (its answer, a toast, lands in `answers`). */
  press(o: { user: string; message: FsMessage; value: unknown }): string {
    return this.push('card.action.trigger', {
      operator: { tenant_key: 'tk', open_id: o.user, user_id: o.user },
      token: 'c-token',
      action: { tag: 'button', value: o.value },
      host: 'im_message',
      context: { open_message_id: o.message.message_id, open_chat_id: o.message.chat_id },
    });
  }

  inChat(chat: string): FsMessage[] {
    return this.messages.filter((m) => m.chat_id === chat);
  }

  callsOf(method: string, prefix: string): FsCall[] {
    return this.calls.filter((c) => c.method === method && c.path.startsWith(prefix));
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  }

  private post(body: Record<string, unknown>, chat: string, replyTo?: string): FsMessage | { code: number; msg: string } {
    const uuid = typeof body.uuid === 'string' ? body.uuid : undefined;
    // one message per uuid within an hour: a repeated request gets the message it already made
    const had = uuid ? this.messages.find((m) => m.uuid === uuid) : undefined;
    if (had) return had;
    const msgType = String(body.msg_type);
    const content = String(body.content ?? '');
    const msg: FsMessage = {
      message_id: `om_bot_${++this.seq}`,
      chat_id: chat,
      msg_type: msgType,
      text: '',
      updates: 0,
      ...(uuid ? { uuid } : {}),
      ...(replyTo ? { reply_to: replyTo, in_thread: body.reply_in_thread === true } : {}),
    };
    if (msgType === 'interactive') {
      if (Buffer.byteLength(JSON.stringify(body)) > 30 * 1024) return { code: 230025, msg: 'The message content exceeds the length limit' };
      msg.card = JSON.parse(content) as FsMessage['card'];
      msg.text = msg.card!.elements.find((e) => e.tag === 'markdown')?.content ?? '';
    } else if (msgType === 'file') {
      const f = this.files.get((JSON.parse(content) as { file_key: string }).file_key);
      if (!f) return { code: 230013, msg: 'file_key not found' };
      msg.file = { name: f.name, text: f.bytes.toString('utf8') };
      msg.text = f.name;
    } else return { code: 230001, msg: `msg_type ${msgType} not handled by the fake` };
    this.messages.push(msg);
    return msg;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers['content-type'] ?? '';
    let body: Record<string, unknown> = {};
    let upload: { name: string; bytes: Buffer } | undefined;
    if (type.startsWith('multipart/form-data')) {
      for (const p of multipartParts(raw, type)) {
        if (p.filename !== undefined) upload = { name: p.filename, bytes: p.data };
        else body[p.name] = p.data.toString('utf8');
      }
    } else if (raw.length) body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const method = req.method ?? 'GET';
    this.calls.push({ method, path: url.pathname, body, at: Date.now() });
    const f = this.faults.take((route) => {
      const [m, prefix] = route.split(' ');
      return m === method && url.pathname.startsWith(prefix);
    });
    if (f)
      return this.send(
        res,
        f.status,
        { code: f.code ?? (f.status === 429 ? 99991400 : 1000), msg: f.status === 429 ? 'request trigger frequency limit' : 'internal error' },
        f.reset !== undefined ? { 'x-ogw-ratelimit-limit': '5', 'x-ogw-ratelimit-reset': String(f.reset) } : {},
      );
    if (url.pathname === '/callback/ws/endpoint') {
      if (body.AppID !== this.appId || body.AppSecret !== this.appSecret) return this.send(res, 200, { code: 514, msg: 'auth failed' });
      return this.send(res, 200, {
        code: 0,
        msg: 'ok',
        data: {
          URL: `${this.url.replace('http', 'ws')}/ws?device_id=d1&service_id=33`,
          ClientConfig: { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 1, ReconnectNonce: 0 },
        },
      });
    }
    if (url.pathname === '/open-apis/auth/v3/tenant_access_token/internal') {
      if (body.app_id !== this.appId || body.app_secret !== this.appSecret) return this.send(res, 200, { code: 10014, msg: 'app secret invalid' });
      return this.send(res, 200, { code: 0, msg: 'ok', tenant_access_token: this.token, expire: 7200 });
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) return this.send(res, 400, { code: 99991663, msg: 'Invalid access token for authorization' });
    if (url.pathname === '/open-apis/bot/v3/info')
      return this.send(res, 200, { code: 0, msg: 'ok', bot: { activate_status: 2, app_name: 'Runtrail', open_id: this.botOpenId } });
    if (url.pathname === '/open-apis/im/v1/files' && method === 'POST') {
      if (!upload) return this.send(res, 200, { code: 234001, msg: 'no file' });
      const file_key = `file_v3_${++this.seq}`;
      this.files.set(file_key, { name: String(body.file_name ?? upload.name), bytes: upload.bytes });
      return this.send(res, 200, { code: 0, msg: 'success', data: { file_key } });
    }
    if (url.pathname === '/open-apis/im/v1/messages' && method === 'POST') {
      if (url.searchParams.get('receive_id_type') !== 'chat_id')
        return this.send(res, 400, { code: 99992402, msg: 'field validation failed: receive_id_type' });
      const r = this.post(body, String(body.receive_id));
      return 'code' in r
        ? this.send(res, 200, r)
        : this.send(res, 200, { code: 0, msg: 'success', data: { message_id: r.message_id, chat_id: r.chat_id, msg_type: r.msg_type } });
    }
    const reply = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(url.pathname);
    if (reply && method === 'POST') {
      const parent = this.messages.find((m) => m.message_id === reply[1]);
      const chat = parent?.chat_id ?? this.userChat(reply[1]);
      if (!chat) return this.send(res, 200, { code: 230011, msg: 'The message was not found' });
      const r = this.post(body, chat, reply[1]);
      return 'code' in r ? this.send(res, 200, r) : this.send(res, 200, { code: 0, msg: 'success', data: { message_id: r.message_id, chat_id: r.chat_id } });
    }
    const resource = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(url.pathname);
    if (resource && method === 'GET') {
      const bytes = this.resources.get(`${resource[1]}/${resource[2]}`);
      if (!bytes) return this.send(res, 200, { code: 234003, msg: 'File not in msg' });
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(bytes);
      return;
    }
    const patch = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(url.pathname);
    if (patch && method === 'PATCH') {
      const msg = this.messages.find((m) => m.message_id === patch[1]);
      if (!msg) return this.send(res, 200, { code: 230011, msg: 'The message was not found' });
      if (msg.msg_type !== 'interactive') return this.send(res, 200, { code: 230001, msg: 'only cards can be updated' });
      if (!msg.card?.config?.update_multi) return this.send(res, 200, { code: 230099, msg: 'a card without update_multi cannot be updated for everyone' });
      msg.card = JSON.parse(String(body.content)) as FsMessage['card'];
      msg.text = msg.card!.elements.find((e) => e.tag === 'markdown')?.content ?? '';
      msg.updates++;
      return this.send(res, 200, { code: 0, msg: 'success', data: {} });
    }
    return this.send(res, 404, { code: 404, msg: `no route ${method} ${url.pathname}` });
  }

  /** The chat of a message a user sent (a reply names only the message). */
  private userChat(messageId: string): string | undefined {
    return this.userChats.get(messageId);
  }
}
