/**
 * The map of chat channels: what a channel extension is (`defineChannel`), what Runtrail hands it
 * when it starts (ChannelContext), and what it hands back (ChannelConnection). A channel only
 * translates between one messaging service and these shapes; who may do what, which run a message
 * starts and what the reply says are decided by the server's IM layer, never here.
 */

/** Where a message goes: the service's chat id, and a thread inside it when there is one. */
export interface ChatAddress {
  chat: string;
  /** Slack's thread_ts, a Telegram forum topic, a Feishu thread: absent for the chat itself. */
  thread?: string;
}

export type ChatType = 'direct' | 'group';

export interface Sender {
  id: string;
  name?: string;
}

/** A file someone sent; the host downloads it into the upload folder when a run needs it. */
export interface InboundFile {
  name: string;
  bytes?: number;
  /** Reads the file from the service; rejects when it cannot (too large, gone). */
  download(): Promise<Uint8Array>;
}

/** Text someone wrote to the bot. */
export interface InboundMessage {
  /** The service's id of this delivery (Telegram update_id, Slack event_id, Feishu event_id): handled once. */
  deliveryId: string;
  /** The message's own id in the chat (what a reply or an edit names). */
  messageId: string;
  to: ChatAddress;
  chatType: ChatType;
  sender: Sender;
  /** The text, with the mention of the bot removed. */
  text: string;
  /** The bot was mentioned (`@bot`), or the message replies to one of the bot's messages as the service tells. */
  addressed: boolean;
  /** The message this one replies to, when it does. */
  replyTo?: string;
  files: InboundFile[];
}

/** Someone pressed a button the bot sent. */
export interface InboundPress {
  deliveryId: string;
  /** The message the button is on. */
  messageId: string;
  to: ChatAddress;
  chatType: ChatType;
  sender: Sender;
  /** The button's value as the host sent it. */
  value: string;
}

/** What the presser is told (a toast, a callback answer, an ephemeral message). */
export interface PressAnswer {
  text: string;
}

export interface Button {
  label: string;
  /** Given back in InboundPress.value; at most 64 bytes (Telegram's limit for callback data). */
  value: string;
  style?: 'primary' | 'danger';
}

export interface OutboundMessage {
  text: string;
  /** Rows of buttons; an empty list removes the buttons an edit's message had. */
  buttons?: Button[][];
}

export interface OutboundFile {
  /** The name the chat shows (the manifest's name). */
  name: string;
  /** Absolute path of the file to send. */
  path: string;
  bytes: number;
}

/**
 * Why a call to the service failed, as data:
 * - `rate_limited`: the service refused it for now and says when to come back; nothing landed.
 * - `unavailable`: a 5xx, a timeout or a network failure; `landed` says whether the request may
 *   have been carried out (`maybe`) or certainly was not (`no`: the connection was refused).
 * - `rejected`: a permanent refusal (bad request, no permission, message too long); trying again
 *   would fail the same way.
 */
export type DeliveryFailure =
  | { kind: 'rate_limited'; retryAfterMs: number; message: string }
  | { kind: 'unavailable'; landed: 'maybe' | 'no'; message: string; retryAfterMs?: number }
  | { kind: 'rejected'; message: string };

export type SendResult = { ok: true; messageId: string } | { ok: false; failure: DeliveryFailure };

export interface SendOptions {
  /** Stable across retries and restarts for one message: a service that de-duplicates by key uses it. */
  key: string;
  /** The message this one answers (a reply in the chat, or in the thread). */
  replyTo?: string;
}

/** The send side of a started channel. Every method resolves with a result and never throws. */
export interface ChannelConnection {
  /** The most characters one message may carry. */
  readonly textLimit: number;
  /** True when a send repeated with the same `key` lands at most once (Feishu's `uuid`). */
  readonly sendsAreKeyed: boolean;
  /** The least time between two edits of one message in this chat (the service's limits, as configured). */
  editIntervalMs(to: ChatAddress, chatType: ChatType): number;
  send(to: ChatAddress, msg: OutboundMessage, opts: SendOptions): Promise<SendResult>;
  /** Replaces a message the bot sent; editing to the text it already has is a success. */
  edit(to: ChatAddress, messageId: string, msg: OutboundMessage): Promise<SendResult>;
  sendFile(to: ChatAddress, file: OutboundFile, opts: SendOptions): Promise<SendResult>;
  /** Ends the inbound loop and lets go of connections; must not throw. */
  stop(): Promise<void>;
}

export type ChannelLogLevel = 'info' | 'warn' | 'error';

/** A small persisted record of the channel's own (Telegram's update offset): survives restarts. */
export interface ChannelStore {
  get(key: string): unknown;
  set(key: string, value: unknown): Promise<void>;
}

export interface ChannelContext {
  /** The configured name (the key in channels.json). */
  name: string;
  /** The channel's own keys of channels.json, `${VAR}` expanded, checked against its configSchema. */
  config: Record<string, unknown>;
  /** Aborted when the channel is stopped. */
  signal: AbortSignal;
  store: ChannelStore;
  /** Hands a message to Runtrail; resolves once it is taken (the reply comes later). Must not be awaited
   *  for longer than the service allows before it resends. Never rejects. */
  receive(msg: InboundMessage): Promise<void>;
  /** Hands a button press to Runtrail; resolves with what to tell the presser. Never rejects. */
  press(p: InboundPress): Promise<PressAnswer>;
  /** The inbound side's state: connected, or why not (the host shows it and masks secrets in it). */
  status(s: { connected: boolean; error?: string }): void;
  log(level: ChannelLogLevel, message: string): void;
}

export interface ChannelDefinition {
  /** The channel type: the key in channels.json, or that entry's `type`. */
  name: string;
  description?: string;
  /** JSON Schema (checked with ajv) of the channel's own keys (the shared keys — allow_from, agents, … — are Runtrail's). */
  configSchema?: Record<string, unknown>;
  /** Keys of the config that hold secrets: never shown, masked wherever text about the channel is written. */
  secretKeys?: string[];
  /**
   * Connects to the service and starts handing inbound messages to `ctx`; resolves with the send side.
   * Rejects when it cannot connect (bad token, service away): the host retries with backoff.
   */
  start(ctx: ChannelContext): Promise<ChannelConnection>;
  /**
   * Checks the settings against the service without receiving anything (`runtrail doctor`,
   * `runtrail channels check`): who the bot is, or why it cannot connect. Must not throw.
   */
  check?(config: Record<string, unknown>, signal: AbortSignal): Promise<ChannelCheck>;
}

export type ChannelCheck = { ok: true; detail: string } | { ok: false; error: string };
