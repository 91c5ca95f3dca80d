/**
 * Starts the configured chat channels and stands between them and the runs. A message comes in: it is
 * taken once (its delivery id remembered on disk), ignored in a group unless it is for the bot, refused
 * unless its sender (and group) is allowed, its files put in the upload folder, and handed to the IM
 * layer; what that decides is posted back — a text answer, or a run's reply streamed into the chat.
 * A channel that cannot connect is retried with backoff and never stops the server or the others.
 *
 * Over 400 lines on purpose: one message's way through (taken, allowed, handed over, answered) reads
 * top to bottom in one file; the parts with a life of their own (delivery record, preview, retries,
 * secret mask) already live beside it.
 */
import { terminalSafe } from '../../events/terminal-safe-text.js';
import { setMaxListeners } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { backoffDelay, sleep } from '../../channels/backoff.js';
import type {
  ChannelConnection,
  ChannelContext,
  ChatAddress,
  ChatType,
  InboundFile,
  InboundMessage,
  InboundPress,
  PressAnswer,
} from '../../channels/channel-types.js';
import { sendWithRetry, type RetryPolicy } from '../../channels/send-retry.js';
import type { ConfiguredChannel } from '../../extensions/channel-config.js';
import type { Agent } from '../../runtime/agent.js';
import type { RunServiceApi } from '../../runtime/run-service-types.js';
import { conversationRuns, dispatchImMessage, type ImMessage } from '../im-dispatch.js';
import { splitReply } from '../im-reply.js';
import { pluginInfo } from '../plugin-catalog.js';
import { createRunOverHttp } from '../run-routes.js';
import { safeUploadName } from '../upload-route.js';
import { channelDir, ensureDir, InboundLedger, JsonChannelStore } from './channel-files.js';
import { DeliveryLog } from './delivery-record.js';
import { PendingReplies, type PendingReply } from './pending-replies.js';
import { isTerminalRunState } from '../../runtime/run-state-machine.js';
import { RunDelivery } from './run-delivery.js';
import { SecretMask } from './secret-mask.js';
import { addressOf, type AnnounceResult, type ChannelCounters, type ChannelPhase, type ChannelStatus, type ChatTarget } from './types.js';

export interface ChannelHostOptions {
  service: RunServiceApi;
  channels: readonly ConfiguredChannel[];
  dataDir: string;
  /** The agents now (they can change under `serve --watch`). */
  agents: () => Agent[];
  /** Where file inputs may come from; default [<dataDir>/uploads], where the files people send are put. */
  inputRoots?: string[];
  /** The largest file a person may send (50 MiB). */
  uploadLimitBytes?: number;
  /** A line for the server's log (secrets already masked); default stderr. */
  log?: (line: string) => void;
  policy?: RetryPolicy;
  /** Waits between attempts to start a channel that cannot connect (1 s doubling to 5 min). */
  restart?: { baseMs: number; capMs: number };
}

/** A refused sender hears it once in this long, not at every message. */
const REFUSAL_QUIET_MS = 60 * 60_000;
/** Ids of messages the bot sent, remembered to tell a reply to the bot in a group. */
const SENT_IDS_KEPT = 10_000;

interface LiveChannel {
  cfg: ConfiguredChannel;
  phase: ChannelPhase;
  connected: boolean;
  lastErrorAt: string | null;
  counters: ChannelCounters;
  conn: ChannelConnection | null;
  abort: AbortController;
  store: JsonChannelStore;
  ledger: InboundLedger;
  deliveriesDir: string;
  /** messages that start a run, noted until the run's delivery record is written */
  pending: PendingReplies;
  /** conversation → the handling of its messages, one at a time */
  chains: Map<string, Promise<void>>;
  /** delivery file → the loop streaming it */
  replies: Map<string, Promise<void>>;
  refusedAt: Map<string, number>;
  sentIds: Set<string>;
  started: Promise<void>;
}

function newCounters(): ChannelCounters {
  return { messagesIn: 0, messagesOut: 0, edits: 0, duplicates: 0, refused: 0, retries: 0, failures: 0, lastError: null };
}

/** A chat's conversation id: the channel, the chat, the thread (letters, digits and _ . : - only). */
export function conversationOf(channel: string, to: ChatAddress): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_.:-]/g, '_').replace(/\.\.+/g, '_');
  return [channel, to.chat, ...(to.thread ? [to.thread] : [])].map(clean).join(':').slice(0, 200);
}

export class ChannelHost {
  private readonly live = new Map<string, LiveChannel>();
  private readonly mask = new SecretMask();
  private readonly writeLog: (line: string) => void;
  private stopping = false;

  constructor(private readonly o: ChannelHostOptions) {
    this.writeLog = o.log ?? ((line) => process.stderr.write(`${terminalSafe(line)}\n`));
    for (const c of o.channels) this.mask.add(c.secrets);
  }

  /** Masks the channels' secrets (and credential shapes) in `text`. */
  masked(text: string): string {
    return this.mask.mask(text);
  }

  private log(name: string, line: string): void {
    this.writeLog(this.masked(`runtrail: channel ${name}: ${line}`));
  }

  /** Starts every usable channel; returns at once (each connects on its own, retrying). */
  start(): void {
    for (const cfg of this.o.channels) {
      if (this.live.has(cfg.name)) continue;
      const dir = channelDir(this.o.dataDir, cfg.name);
      ensureDir(dir);
      const lc: LiveChannel = {
        cfg,
        phase: cfg.unusable ? 'unusable' : 'starting',
        connected: false,
        lastErrorAt: null,
        counters: newCounters(),
        conn: null,
        abort: new AbortController(),
        store: new JsonChannelStore(join(dir, 'store.json')),
        ledger: new InboundLedger(join(dir, 'inbound.log')),
        deliveriesDir: join(dir, 'deliveries'),
        pending: new PendingReplies(join(dir, 'pending')),
        chains: new Map(),
        replies: new Map(),
        refusedAt: new Map(),
        sentIds: new Set(),
        started: Promise.resolve(),
      };
      // one listener per reply streamed, each removed when it ends: many at once is normal here
      setMaxListeners(0, lc.abort.signal);
      this.live.set(cfg.name, lc);
      if (cfg.unusable) {
        this.fail(lc, `not started: ${cfg.unusable} (${cfg.file})`);
        continue;
      }
      lc.started = this.keepStarted(lc);
    }
  }

  private fail(lc: LiveChannel, message: string): void {
    lc.counters.lastError = this.masked(message);
    lc.lastErrorAt = new Date().toISOString();
    this.log(lc.cfg.name, message);
  }

  private async keepStarted(lc: LiveChannel): Promise<void> {
    const restart = this.o.restart ?? { baseMs: 1000, capMs: 5 * 60_000 };
    for (let failures = 0; !lc.abort.signal.aborted; ) {
      try {
        lc.phase = 'starting';
        const conn = await lc.cfg.definition.start(this.contextFor(lc));
        if (lc.abort.signal.aborted) {
          await conn.stop();
          return;
        }
        lc.conn = conn;
        if (lc.phase === 'starting') lc.phase = 'connected';
        lc.connected = lc.phase === 'connected';
        this.log(lc.cfg.name, `started (${lc.cfg.type})`);
        for (const log of DeliveryLog.unfinished(lc.deliveriesDir)) this.drive(lc, log);
        for (const p of lc.pending.list())
          void this.recoverPending(lc, p).catch((e: unknown) =>
            this.fail(lc, `a reply left pending could not be taken up: ${(e as Error)?.message ?? String(e)}`),
          );
        return;
      } catch (e) {
        failures++;
        const wait = backoffDelay(failures, restart);
        lc.phase = 'disconnected';
        lc.connected = false;
        this.fail(lc, `cannot start: ${(e as Error)?.message ?? String(e)}; trying again in ${Math.round(wait / 1000)} s`);
        await sleep(wait, lc.abort.signal);
      }
    }
  }

  private contextFor(lc: LiveChannel): ChannelContext {
    const name = lc.cfg.name;
    return {
      name,
      config: lc.cfg.config,
      signal: lc.abort.signal,
      store: lc.store,
      receive: (msg) => this.receive(lc, msg).catch((e: unknown) => this.fail(lc, `a message could not be handled: ${(e as Error)?.message ?? String(e)}`)),
      press: (p) =>
        this.press(lc, p).catch((e: unknown) => {
          this.fail(lc, `a button press could not be handled: ${(e as Error)?.message ?? String(e)}`);
          return { text: 'Something went wrong; try again.' };
        }),
      status: (s) => {
        lc.connected = s.connected;
        if (lc.phase !== 'stopped') lc.phase = s.connected ? 'connected' : 'disconnected';
        if (s.error) this.fail(lc, s.error);
      },
      log: (level, message) => this.log(name, `${level === 'info' ? '' : `${level}: `}${message}`),
    };
  }

  private allowed(lc: LiveChannel, to: ChatAddress, chatType: ChatType, senderId: string): boolean {
    const allow = lc.cfg.policy.allowFrom;
    return allow.includes(senderId) && (chatType === 'direct' || allow.includes(to.chat));
  }

  /** Takes a message: once per delivery id, then handled in order with its conversation's others. */
  private async receive(lc: LiveChannel, msg: InboundMessage): Promise<void> {
    const { fresh, saved } = lc.ledger.take(`message:${msg.deliveryId}`);
    if (!fresh) {
      lc.counters.duplicates++;
      return;
    }
    await saved;
    const conversationId = conversationOf(lc.cfg.name, msg.to);
    const prev = lc.chains.get(conversationId) ?? Promise.resolve();
    const next = prev
      .then(() => this.handle(lc, msg, conversationId))
      .catch((e: unknown) => this.fail(lc, `a message could not be handled: ${(e as Error)?.message ?? String(e)}`));
    lc.chains.set(conversationId, next);
    void next.finally(() => {
      if (lc.chains.get(conversationId) === next) lc.chains.delete(conversationId);
    });
  }

  /** In a group the bot answers when it is mentioned, replied to, or the thread is one of its conversations. */
  private async forTheBot(lc: LiveChannel, msg: InboundMessage, conversationId: string): Promise<boolean> {
    if (msg.chatType === 'direct' || !lc.cfg.policy.requireMention || msg.addressed) return true;
    if (msg.replyTo && lc.sentIds.has(`${msg.to.chat}|${msg.replyTo}`)) return true;
    if (!msg.to.thread) return false;
    return (await conversationRuns(this.o.service, conversationId)).length > 0;
  }

  private async handle(lc: LiveChannel, msg: InboundMessage, conversationId: string): Promise<void> {
    if (!(await this.forTheBot(lc, msg, conversationId))) return;
    lc.counters.messagesIn++;
    if (!this.allowed(lc, msg.to, msg.chatType, msg.sender.id)) {
      lc.counters.refused++;
      await this.refuse(lc, msg);
      return;
    }
    const files = await this.takeFiles(lc, msg);
    if (typeof files === 'string') {
      await this.say(lc, msg.to, files, msg.messageId, msg.deliveryId);
      return;
    }
    const who = `${lc.cfg.name}:${msg.sender.id}${msg.sender.name ? ` (${msg.sender.name})` : ''}`;
    // noted before a run can exist: a process killed before the run's delivery record is written
    // leaves the note, and the next start delivers that run's reply
    await lc.pending.add({
      delivery_id: msg.deliveryId,
      conversation_id: conversationId,
      to: msg.to,
      chat_type: msg.chatType,
      ...(msg.messageId ? { reply_to: msg.messageId } : {}),
      at: new Date().toISOString(),
    });
    try {
      const outcome = await this.dispatch(lc, { conversationId, text: msg.text, files, who });
      if (outcome.kind === 'answer') {
        await this.say(lc, msg.to, outcome.text, msg.messageId, msg.deliveryId);
        return;
      }
      if (outcome.prefix) await this.say(lc, msg.to, outcome.prefix, msg.messageId, msg.deliveryId);
      await this.follow(lc, outcome.runId, msg.to, msg.chatType, outcome.started ? msg.messageId : undefined);
    } finally {
      lc.pending.remove(msg.deliveryId);
    }
  }

  /**
   * A message a dead process took and noted, whose run's reply it may never have begun: the run the
   * message started (the conversation's first created at or after the note) is followed into the
   * chat; when there is none and no run of the conversation was live to take it as steering, the
   * chat is asked to send it again.
   */
  private async recoverPending(lc: LiveChannel, p: PendingReply): Promise<void> {
    const runs = await conversationRuns(this.o.service, p.conversation_id);
    const started = runs.filter((r) => r.created_at >= p.at).sort((a, b) => a.created_at.localeCompare(b.created_at))[0];
    if (started) await this.follow(lc, started.run_id, p.to, p.chat_type, p.reply_to);
    else if (!runs.some((r) => !isTerminalRunState(r.status) || (r.finished_at ?? '') >= p.at)) {
      this.log(lc.cfg.name, `a message taken in ${p.to.chat} before a restart started no run: asked to send it again`);
      await this.say(lc, p.to, 'Runtrail restarted before it could start on your message; please send it again.', p.reply_to, `${p.delivery_id}:lost`);
    }
    lc.pending.remove(p.delivery_id);
  }

  private dispatch(lc: LiveChannel, msg: ImMessage) {
    const agents = this.o.agents;
    const inputRoots = this.o.inputRoots ?? [join(this.o.dataDir, 'uploads')];
    return dispatchImMessage(this.o.service, msg, {
      catalog: () => agents().map(pluginInfo),
      chatPlugin: lc.cfg.policy.defaultAgent,
      ...(lc.cfg.policy.agents ? { agents: lc.cfg.policy.agents } : {}),
      // as over HTTP: no script model, no file from outside the upload folder
      createRun: (req) => createRunOverHttp(this.o.service, req, { dataDir: this.o.dataDir, agents, inputRoots, allowScriptModel: false }, { claw: 'im' }),
    });
  }

  private async refuse(lc: LiveChannel, msg: InboundMessage): Promise<void> {
    const key = `${msg.to.chat}|${msg.sender.id}`;
    const last = lc.refusedAt.get(key);
    const now = Date.now();
    if (last !== undefined && now - last < REFUSAL_QUIET_MS) return;
    lc.refusedAt.set(key, now);
    const senderOk = lc.cfg.policy.allowFrom.includes(msg.sender.id);
    const why = senderOk ? `this group (${msg.to.chat}) is not in allow_from` : `your id (${msg.sender.id}) is not in allow_from`;
    this.log(lc.cfg.name, `refused a message from ${msg.sender.id} in ${msg.to.chat}: ${why}`);
    await this.say(
      lc,
      msg.to,
      `Sorry, this bot does not take requests from you: ${why}. Ask whoever runs it to add the id to ${lc.cfg.file}.`,
      msg.messageId,
      msg.deliveryId,
    );
  }

  /** The files sent with a message, in the upload folder; a string says why they could not be taken. */
  private async takeFiles(lc: LiveChannel, msg: InboundMessage): Promise<Array<{ path: string; name: string }> | string> {
    const limit = this.o.uploadLimitBytes ?? 50 * 1024 * 1024;
    const dir = join(this.o.dataDir, 'uploads');
    const out: Array<{ path: string; name: string }> = [];
    for (const f of msg.files) {
      const r = await this.takeFile(f, dir, limit);
      if (typeof r === 'string') {
        this.log(lc.cfg.name, `a file sent in ${msg.to.chat} was not taken: ${r}`);
        return r;
      }
      out.push(r);
    }
    return out;
  }

  private async takeFile(f: InboundFile, dir: string, limit: number): Promise<{ path: string; name: string } | string> {
    if (f.bytes !== undefined && f.bytes > limit)
      return `${f.name} is larger than the ${Math.round(limit / 1024 / 1024)} MB a file may be; nothing was started.`;
    let bytes: Uint8Array;
    try {
      bytes = await f.download();
    } catch (e) {
      return `Could not read ${f.name} from the chat: ${this.masked((e as Error)?.message ?? String(e))}`;
    }
    if (bytes.byteLength > limit) return `${f.name} is larger than the ${Math.round(limit / 1024 / 1024)} MB a file may be; nothing was started.`;
    ensureDir(dir);
    const path = join(dir, safeUploadName(f.name));
    await writeFile(path, bytes, { flag: 'wx', mode: 0o600 });
    return { path, name: f.name };
  }

  /** A text answer, split at the channel's limit; each part sent once (retried only where that cannot post twice). */
  private async say(lc: LiveChannel, to: ChatAddress, text: string, replyTo: string | undefined, deliveryId: string): Promise<void> {
    const conn = lc.conn;
    if (!conn) return;
    const parts = splitReply(text, conn.textLimit);
    for (let i = 0; i < parts.length; i++) {
      const out = await sendWithRetry(
        () => conn.send(to, { text: parts[i] }, { key: `${deliveryId}:${i}`.slice(-50), ...(i === 0 && replyTo ? { replyTo } : {}) }),
        {
          repeatable: conn.sendsAreKeyed,
          signal: lc.abort.signal,
          ...(this.o.policy ? { policy: this.o.policy } : {}),
        },
      );
      lc.counters.retries += out.retried.length;
      if (out.result.ok) {
        lc.counters.messagesOut++;
        this.rememberSent(lc, to, out.result.messageId);
      } else {
        lc.counters.failures++;
        this.fail(lc, `an answer could not be sent to ${to.chat}: ${out.result.failure.message}`);
        return;
      }
    }
  }

  private rememberSent(lc: LiveChannel, to: ChatAddress, messageId: string): void {
    lc.sentIds.add(`${to.chat}|${messageId}`);
    if (lc.sentIds.size > SENT_IDS_KEPT) lc.sentIds.delete(lc.sentIds.values().next().value as string);
  }

  /** A button press: an allowed sender's decides as that person; anyone else's decides nothing. */
  private async press(lc: LiveChannel, p: InboundPress): Promise<PressAnswer> {
    const { fresh, saved } = lc.ledger.take(`press:${p.deliveryId}`);
    if (!fresh) {
      lc.counters.duplicates++;
      return { text: 'Already handled.' };
    }
    await saved;
    lc.counters.messagesIn++;
    if (!this.allowed(lc, p.to, p.chatType, p.sender.id)) {
      lc.counters.refused++;
      this.log(lc.cfg.name, `refused a button press from ${p.sender.id} in ${p.to.chat}`);
      return { text: 'Not allowed: you may not decide this.' };
    }
    if (!/^\/(approve|deny) [A-Za-z0-9_-]{1,64}$/.test(p.value)) return { text: 'This button does nothing any more.' };
    const who = `${lc.cfg.name}:${p.sender.id}${p.sender.name ? ` (${p.sender.name})` : ''}`;
    const outcome = await this.dispatch(lc, { conversationId: conversationOf(lc.cfg.name, p.to), text: p.value, who });
    return { text: outcome.kind === 'follow' ? (outcome.prefix ?? 'Done.') : outcome.text };
  }

  /** Streams a run's reply into a chat (once per run and chat, also across restarts). */
  private async follow(
    lc: LiveChannel,
    runId: string,
    to: ChatAddress,
    chatType: ChatType,
    replyTo: string | undefined,
    mode: 'live' | 'final' = 'live',
  ): Promise<DeliveryLog> {
    const log = await DeliveryLog.open(lc.deliveriesDir, { run_id: runId, to, chat_type: chatType, mode, ...(replyTo ? { reply_to: replyTo } : {}) });
    this.drive(lc, log);
    return log;
  }

  private drive(lc: LiveChannel, log: DeliveryLog): Promise<void> {
    const running = lc.replies.get(log.file);
    if (running) return running;
    const loop = (async () => {
      for (let failures = 0; !lc.abort.signal.aborted && lc.conn; ) {
        let pass;
        try {
          pass = await new RunDelivery({
            service: this.o.service,
            conn: lc.conn,
            log,
            counters: lc.counters,
            report: (line) => this.fail(lc, line),
            signal: lc.abort.signal,
            ...(this.o.policy ? { policy: this.o.policy } : {}),
          }).run();
        } catch (e) {
          pass = 'incomplete' as const;
          this.fail(lc, `the reply of run ${log.record.run_id} stopped: ${(e as Error)?.message ?? String(e)}`);
          if ((e as { code?: string }).code === 'not_found') {
            await log.finish();
            return;
          }
        }
        for (const id of Object.values(log.record.sent)) this.rememberSent(lc, log.record.to, id);
        if (pass !== 'incomplete') return;
        failures++;
        await sleep(backoffDelay(failures, { baseMs: 2000, capMs: 5 * 60_000 }), lc.abort.signal);
      }
    })();
    lc.replies.set(log.file, loop);
    void loop.finally(() => lc.replies.delete(log.file));
    return loop;
  }

  /** Posts a run's answer and files to a chat once it ends (what schedules and webhooks call). */
  readonly announce = async (target: ChatTarget, runId: string): Promise<AnnounceResult> => {
    const lc = this.live.get(target.channel);
    if (!lc) return { ok: false, error: `no channel "${target.channel}" (channels: ${[...this.live.keys()].join(', ') || 'none'})` };
    await lc.started;
    if (!lc.conn) return { ok: false, error: `channel ${target.channel} is not connected${lc.counters.lastError ? ` (${lc.counters.lastError})` : ''}` };
    const log = await this.follow(lc, runId, addressOf(target), 'group', undefined, 'final');
    await lc.replies.get(log.file);
    const sent = Object.keys(log.record.sent).length;
    return log.record.finished ? { ok: true, messages: sent } : { ok: false, error: lc.counters.lastError ?? 'not delivered yet; it is tried again' };
  };

  status(): ChannelStatus[] {
    return [...this.live.values()].map((lc) => ({
      name: lc.cfg.name,
      type: lc.cfg.type,
      file: lc.cfg.file,
      state: lc.phase,
      connected: lc.connected,
      last_error: lc.counters.lastError,
      last_error_at: lc.lastErrorAt,
      messages_in: lc.counters.messagesIn,
      messages_out: lc.counters.messagesOut,
      edits: lc.counters.edits,
      duplicates: lc.counters.duplicates,
      refused: lc.counters.refused,
      retries: lc.counters.retries,
      failures: lc.counters.failures,
      live_replies: lc.replies.size,
    }));
  }

  /** Stops every channel: inbound loops end, replies being streamed stop where they are (a restart continues them). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const lc of this.live.values()) lc.abort.abort();
    await Promise.all(
      [...this.live.values()].map(async (lc) => {
        await lc.started;
        await Promise.allSettled([...lc.replies.values(), ...lc.chains.values()]);
        await lc.conn?.stop().catch(() => undefined);
        lc.phase = 'stopped';
        lc.connected = false;
      }),
    );
  }
}
