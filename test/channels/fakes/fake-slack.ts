/**
 * A Slack of our own, on loopback, built from the published references: the Web API (docs.slack.dev
 * reference/methods: `{ ok, … }` / `{ ok: false, error }`, Bearer tokens, form or JSON arguments,
 * 429 with Retry-After) for the methods the channel calls, the three-step file upload
 * (files.getUploadURLExternal, the upload URL, files.completeUploadExternal), and Socket Mode
 * (apps.connections.open → a WebSocket: `hello`, then envelopes the app must acknowledge).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { multipartParts } from './fake-telegram.js';
import { FaultQueue, LoopbackServer } from './loopback-server.js';

export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
}

export interface SlackMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  blocks?: unknown[];
  edits: number;
  /** a file shared into the channel */
  file?: { name: string; text: string };
}

export class FakeSlack {
  readonly botToken = 'xoxb-1-fake-bot-token';
  readonly appToken = 'xapp-1-A1-fake-app-token';
  readonly botUserId = 'UBOT01';
  readonly calls: SlackCall[] = [];
  readonly messages: SlackMessage[] = [];
  readonly ephemeral: Array<{ channel: string; user: string; text: string }> = [];
  /** envelope ids the app acknowledged */
  readonly acks: string[] = [];
  private readonly http = new LoopbackServer();
  private clock = 1_700_000_000;
  private seq = 0;
  private readonly faults = new FaultQueue<{ status: number; retryAfter?: number; error?: string }>();
  private uploads = new Map<string, { name: string; length: number; bytes?: Buffer }>();
  private readonly files = new Map<string, Buffer>();

  start(): Promise<string> {
    return this.http.start((req, res) => this.route(req, res), { path: '/link', onSocket: (ws) => this.onSocket(ws) });
  }

  get url(): string {
    return this.http.url;
  }

  get apiUrl(): string {
    return `${this.url}/api`;
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  get connected(): number {
    return this.http.open.length;
  }

  /** The next call(s) of `method` answer this HTTP status (429 with Retry-After seconds, or a 5xx). */
  failNext(method: string, fault: { status: number; retryAfter?: number; error?: string }, times = 1): void {
    this.faults.add(method, fault, times);
  }

  private nextTs(): string {
    return `${this.clock++}.${String(++this.seq).padStart(6, '0')}`;
  }

  private onSocket(ws: WebSocket): void {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { envelope_id?: string };
      if (m.envelope_id) this.acks.push(m.envelope_id);
    });
    ws.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'fake' }, connection_info: { app_id: 'A1' } }));
  }

  private envelope(type: string, payload: unknown, envelopeId?: string): string {
    const id = envelopeId ?? `env-${++this.seq}`;
    const body = JSON.stringify({
      envelope_id: id,
      type,
      payload,
      accepts_response_payload: false,
      ...(type === 'events_api' ? { retry_attempt: 0, retry_reason: '' } : {}),
    });
    for (const ws of this.http.open) ws.send(body);
    return id;
  }

  /** A person writes; `mention` makes it an app_mention in a channel. Returns the event (to deliver it again). */
  userMessage(o: {
    channel: string;
    user: string;
    text: string;
    thread_ts?: string;
    mention?: boolean;
    im?: boolean;
    file?: { name: string; content: string };
    eventId?: string;
    ts?: string;
  }): { event_id: string; ts: string; event: Record<string, unknown> } {
    const ts = o.ts ?? this.nextTs();
    const text = o.mention ? `<@${this.botUserId}> ${o.text}` : o.text;
    const event: Record<string, unknown> = {
      type: o.mention ? 'app_mention' : 'message',
      channel: o.channel,
      channel_type: o.im ? 'im' : 'channel',
      user: o.user,
      text,
      ts,
      ...(o.thread_ts ? { thread_ts: o.thread_ts } : {}),
    };
    if (o.file) {
      const id = `F${++this.seq}`;
      this.files.set(id, Buffer.from(o.file.content));
      event.subtype = 'file_share';
      event.files = [{ id, name: o.file.name, size: Buffer.byteLength(o.file.content), url_private_download: `${this.url}/files-pri/${id}/${o.file.name}` }];
    }
    const event_id = o.eventId ?? `Ev${++this.seq}`;
    this.envelope('events_api', { type: 'event_callback', team_id: 'T1', api_app_id: 'A1', event, event_id, event_time: Math.floor(Date.now() / 1000) });
    return { event_id, ts, event };
  }

  /** An event delivered again (Slack retries an event it did not see acknowledged), or another event of the same message. */
  redeliver(event_id: string, event: Record<string, unknown>): void {
    this.envelope('events_api', { type: 'event_callback', team_id: 'T1', api_app_id: 'A1', event, event_id, event_time: Math.floor(Date.now() / 1000) });
  }

  /** A person presses a Block Kit button of a bot message. */
  press(o: { user: string; message: SlackMessage; value: string }): string {
    return this.envelope('interactive', {
      type: 'block_actions',
      user: { id: o.user, username: `user_${o.user}` },
      channel: { id: o.message.channel },
      container: {
        type: 'message',
        channel_id: o.message.channel,
        message_ts: o.message.ts,
        ...(o.message.thread_ts ? { thread_ts: o.message.thread_ts } : {}),
      },
      message: { ts: o.message.ts, ...(o.message.thread_ts ? { thread_ts: o.message.thread_ts } : {}), text: o.message.text },
      actions: [{ type: 'button', action_id: 'runtrail_0_0', value: o.value, action_ts: `${Date.now() / 1000}` }],
    });
  }

  callsOf(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  inChannel(channel: string): SlackMessage[] {
    return this.messages.filter((m) => m.channel === channel);
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  }

  private async body(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  private args(raw: Buffer, type: string): Record<string, unknown> {
    if (type.startsWith('application/json')) return raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) out[k] = /^[[{]/.test(v) ? JSON.parse(v) : v;
    return out;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const raw = await this.body(req);
    const file = /^\/files-pri\/([^/]+)\//.exec(url.pathname);
    if (file) {
      if (req.headers.authorization !== `Bearer ${this.botToken}`) return this.send(res, 403, { ok: false, error: 'not_authed' });
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(this.files.get(file[1]) ?? Buffer.alloc(0));
      return;
    }
    const upload = /^\/upload\/([^/]+)$/.exec(url.pathname);
    if (upload) {
      const u = this.uploads.get(upload[1]);
      if (!u) return this.send(res, 404, { ok: false });
      // the upload URL takes the bytes as the body, or as a multipart form's file
      const type = req.headers['content-type'] ?? '';
      u.bytes = type.startsWith('multipart/form-data') ? (multipartParts(raw, type).find((p) => p.filename !== undefined)?.data ?? raw) : raw;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`OK - ${raw.length}`);
      return;
    }
    const m = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (!m) return this.send(res, 404, { ok: false, error: 'unknown_method' });
    const method = m[1];
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const args = this.args(raw, req.headers['content-type'] ?? '');
    this.calls.push({ method, args, token, at: Date.now() });
    const fault = this.faults.take((k) => k === method);
    if (fault)
      return this.send(
        res,
        fault.status,
        { ok: false, error: fault.error ?? (fault.status === 429 ? 'ratelimited' : 'internal_error') },
        fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {},
      );
    const wanted = method === 'apps.connections.open' ? this.appToken : this.botToken;
    if (token !== wanted) return this.send(res, 200, { ok: false, error: 'invalid_auth' });
    switch (method) {
      case 'auth.test':
        return this.send(res, 200, {
          ok: true,
          url: 'https://fake.slack.com/',
          team: 'Fake Team',
          user: 'runtrail',
          team_id: 'T1',
          user_id: this.botUserId,
          bot_id: 'B1',
        });
      case 'apps.connections.open':
        return this.send(res, 200, { ok: true, url: `${this.url.replace('http', 'ws')}/link/?ticket=t${++this.seq}` });
      case 'chat.postMessage': {
        const text = String(args.text ?? '');
        if (!text && !args.blocks) return this.send(res, 200, { ok: false, error: 'no_text' });
        if (text.length > 40_000) return this.send(res, 200, { ok: false, error: 'msg_too_long' });
        const msg: SlackMessage = {
          channel: String(args.channel),
          ts: this.nextTs(),
          text,
          edits: 0,
          ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
          ...(Array.isArray(args.blocks) && args.blocks.length ? { blocks: args.blocks } : {}),
        };
        this.messages.push(msg);
        return this.send(res, 200, { ok: true, channel: msg.channel, ts: msg.ts, message: { text, ts: msg.ts, user: this.botUserId } });
      }
      case 'chat.update': {
        const msg = this.messages.find((x) => x.channel === String(args.channel) && x.ts === String(args.ts));
        if (!msg) return this.send(res, 200, { ok: false, error: 'message_not_found' });
        msg.text = String(args.text ?? msg.text);
        if (Array.isArray(args.blocks)) {
          if (args.blocks.length) msg.blocks = args.blocks;
          else delete msg.blocks;
        }
        msg.edits++;
        return this.send(res, 200, { ok: true, channel: msg.channel, ts: msg.ts, text: msg.text });
      }
      case 'chat.postEphemeral':
        this.ephemeral.push({ channel: String(args.channel), user: String(args.user), text: String(args.text) });
        return this.send(res, 200, { ok: true, message_ts: this.nextTs() });
      case 'files.getUploadURLExternal': {
        const file_id = `F${++this.seq}`;
        this.uploads.set(file_id, { name: String(args.filename), length: Number(args.length) });
        return this.send(res, 200, { ok: true, upload_url: `${this.url}/upload/${file_id}`, file_id });
      }
      case 'files.completeUploadExternal': {
        const list = (Array.isArray(args.files) ? args.files : []) as Array<{ id: string; title?: string }>;
        const done = [];
        for (const f of list) {
          const u = this.uploads.get(f.id);
          if (!u?.bytes) return this.send(res, 200, { ok: false, error: 'file_not_found' });
          this.messages.push({
            channel: String(args.channel_id),
            ts: this.nextTs(),
            text: '',
            edits: 0,
            file: { name: u.name, text: u.bytes.toString('utf8') },
            ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
          });
          done.push({ id: f.id, name: u.name, title: f.title ?? u.name });
        }
        return this.send(res, 200, { ok: true, files: done });
      }
      default:
        return this.send(res, 200, { ok: false, error: 'unknown_method' });
    }
  }
}
