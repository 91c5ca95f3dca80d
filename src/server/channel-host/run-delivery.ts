/**
 * One run's reply in one chat: a message posted when the run starts and edited in place (status line,
 * then the answer as it is written), buttons for approvals, then the IM buffer's assembled answer —
 * its first part in the preview message, the rest as new messages — and the run's artifacts as files.
 * Every message is sent under a key of the run's DeliveryLog, so running this again (after a failure
 * or a restart) continues the reply and never posts a part twice.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { AgentEvent } from '../../events/agent-event.js';
import type { StepApproval } from '../../events/engine-event.js';
import { createEngineBridge } from '../../events/engine-bridge.js';
import { BufferAdapter } from '../../channels/buffer-adapter.js';
import { sleep } from '../../channels/backoff.js';
import type { ChannelConnection, OutboundFile, SendResult } from '../../channels/channel-types.js';
import { sendWithRetry, type RetryOutcome, type RetryPolicy } from '../../channels/send-retry.js';
import type { PublicDocument, RunServiceApi } from '../../runtime/run-service-types.js';
import { splitReply } from '../im-reply.js';
import { runTraceId } from '../run-frames.js';
import type { DeliveryLog } from './delivery-record.js';
import { EditThrottle } from './edit-throttle.js';
import { ReplyPreview } from './reply-preview.js';
import type { ChannelCounters } from './types.js';

export interface RunDeliveryDeps {
  service: RunServiceApi;
  conn: ChannelConnection;
  log: DeliveryLog;
  counters: ChannelCounters;
  /** Writes a line to the server's log (the host masks secrets in it). */
  report(message: string): void;
  signal: AbortSignal;
  policy?: RetryPolicy;
}

/** How a delivery pass ended: `done` (the record is finished), `stopped` (the host is stopping), `incomplete` (try again later). */
export type DeliveryPass = 'done' | 'stopped' | 'incomplete';

/** What a run's buttons send back: the same commands a person could type. */
export function approvalButtons(a: StepApproval) {
  return [
    [
      { label: 'Approve', value: `/approve ${a.id}`, style: 'primary' as const },
      { label: 'Deny', value: `/deny ${a.id}`, style: 'danger' as const },
    ],
  ];
}

export function approvalText(runId: string, a: StepApproval): string {
  return `Run ${runId} wants to call ${a.tool} ${JSON.stringify(a.args).slice(0, 300)}.\nPress a button, or write /approve ${a.id} or /deny ${a.id} <reason>.`;
}

export function decidedText(runId: string, a: StepApproval): string {
  const who = a.who ?? a.by ?? 'someone';
  return a.status === 'approved'
    ? `✅ ${a.tool} approved by ${who} (run ${runId}).`
    : `⛔ ${a.tool} denied by ${who}${a.reason ? `: ${a.reason}` : ''} (run ${runId}).`;
}

/** The documents a chat gets as files: those the manifest says are for the user and not confidential. */
export function documentsForChat(docs: readonly PublicDocument[]): PublicDocument[] {
  return docs.filter((d) => d.audience === 'user' && d.sensitivity !== 'confidential');
}

/** The file name a chat shows: the manifest's path under artifacts/ (a sub-folder joined with `_`). */
export function chatFileName(docPath: string): string {
  const rel = docPath.replace(/^artifacts\//, '');
  return rel.includes('/') ? rel.split('/').join('_') : basename(rel);
}

export class RunDelivery {
  private readonly preview = new ReplyPreview();
  private throttle: EditThrottle | null = null;
  private readonly adapter = new BufferAdapter();
  private incomplete = false;

  constructor(private readonly d: RunDeliveryDeps) {}

  private get rec() {
    return this.d.log.record;
  }

  /** A key the service can de-duplicate by (Feishu's uuid takes at most 50 characters). */
  private serviceKey(key: string): string {
    return createHash('sha256')
      .update(`${this.rec.run_id}|${this.rec.to.chat}|${this.rec.to.thread ?? ''}|${key}`)
      .digest('hex')
      .slice(0, 32);
  }

  private async retried(call: () => Promise<SendResult>, repeatable: boolean, what: string, kind: 'send' | 'edit'): Promise<RetryOutcome> {
    const out = await sendWithRetry(call, { repeatable, signal: this.d.signal, ...(this.d.policy ? { policy: this.d.policy } : {}) });
    this.d.counters.retries += out.retried.length;
    if (out.result.ok) {
      if (kind === 'send') this.d.counters.messagesOut++;
      else this.d.counters.edits++;
    } else if (!this.d.signal.aborted) {
      this.d.counters.failures++;
      this.d.counters.lastError = `${what}: ${out.result.failure.message}`;
      this.d.report(
        `${what} for run ${this.rec.run_id} failed${out.mayHaveLanded ? ' (it may have reached the chat; not sent again)' : ''}: ${out.result.failure.message}`,
      );
    }
    return out;
  }

  /** Sends under `key` once; false when it failed and may be tried again later. */
  private async sendOnce(key: string, what: string, call: (serviceKey: string) => Promise<SendResult>): Promise<string | null | false> {
    const keyed = this.d.conn.sendsAreKeyed;
    const r = await this.d.log.once(key, keyed, () => this.retried(() => call(this.serviceKey(key)), keyed, what, 'send'));
    if (r.kind === 'sent') return r.messageId;
    if (r.kind === 'already') return r.messageId;
    // refused for good (recorded, not tried again) or may have landed: nothing more to do for this key
    if (r.outcome.mayHaveLanded || (!r.outcome.result.ok && r.outcome.result.failure.kind === 'rejected')) return null;
    this.incomplete = true;
    return false;
  }

  async run(): Promise<DeliveryPass> {
    const { service, conn, signal } = this.d;
    const rec = this.rec;
    if (rec.mode === 'live') await this.startPreview();
    const bridge = createEngineBridge({ traceId: await runTraceId(service, rec.run_id) });
    try {
      for await (const ev of service.events(rec.run_id, { after: 0, signal })) {
        const e = bridge.translate(ev);
        if (e) this.adapter.emit(e);
        if (this.throttle && this.preview.apply(ev)) this.throttle.offer(this.preview.text(conn.textLimit));
        if (ev.stream === 'tool' && ev.data.phase === 'approval') await this.approval(ev);
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
    await this.throttle?.close();
    if (signal.aborted) return 'stopped';
    await this.answer();
    await this.files();
    if (signal.aborted) return 'stopped';
    if (this.incomplete) return 'incomplete';
    await this.d.log.finish();
    return 'done';
  }

  private async startPreview(): Promise<void> {
    const { conn } = this.d;
    const to = this.rec.to;
    const id = await this.sendOnce('preview', 'posting the preview', (key) =>
      conn.send(to, { text: this.preview.statusLine() }, { key, ...(this.rec.reply_to ? { replyTo: this.rec.reply_to } : {}) }),
    );
    if (!id) return;
    this.throttle = new EditThrottle(
      {
        intervalMs: conn.editIntervalMs(to, this.rec.chat_type),
        edit: (text) => conn.edit(to, id, { text }),
        onResult: (r) => {
          if (r.ok) this.d.counters.edits++;
          else if (r.failure.kind === 'rate_limited') this.d.counters.retries++;
        },
      },
      this.preview.statusLine(),
    );
  }

  private async approval(ev: AgentEvent): Promise<void> {
    if (ev.stream !== 'tool' || ev.data.phase !== 'approval') return;
    const a = ev.data.approval;
    const { conn, service } = this.d;
    const key = `approval:${a.id}`;
    if (a.status === 'pending') {
      // history holds approvals decided since: only one still waiting gets buttons
      if (!(service.pendingApprovals?.(this.rec.run_id) ?? []).some((p) => p.id === a.id)) return;
      await this.sendOnce(key, 'asking for an approval', (k) =>
        conn.send(this.rec.to, { text: approvalText(this.rec.run_id, a), buttons: approvalButtons(a) }, { key: k }),
      );
      return;
    }
    const messageId = this.d.log.sentUnder(key);
    if (!messageId || this.d.log.sentUnder(`${key}:decided`) !== undefined) return;
    const out = await this.retried(
      () => conn.edit(this.rec.to, messageId, { text: decidedText(this.rec.run_id, a), buttons: [] }),
      true,
      'closing an approval',
      'edit',
    );
    if (out.result.ok) await this.d.log.mark(`${key}:decided`, messageId);
  }

  /** The assembled answer: its first part replaces the preview, the rest follow as new messages. */
  private async answer(): Promise<void> {
    const { conn, service, signal } = this.d;
    const runId = this.rec.run_id;
    const assembled: unknown = this.adapter.assemble();
    const body = typeof assembled === 'string' ? assembled : String((assembled as { text?: unknown }).text ?? '');
    const status = (await service.get(runId))?.status ?? 'unknown';
    const text = body || (status === 'completed' ? 'Done.' : `Run ${runId} ended: ${status}.`);
    const parts = splitReply(text, conn.textLimit);
    const previewId = this.d.log.sentUnder('preview');
    for (let i = 0; i < parts.length && !signal.aborted; i++) {
      const key = `part:${i + 1}`;
      if (this.d.log.sentUnder(key) !== undefined) continue;
      if (i === 0 && previewId) {
        const wait = (this.throttle?.readyAt ?? 0) - Date.now();
        if (wait > 0 && !(await sleep(wait, signal))) return;
        const out = await this.retried(() => conn.edit(this.rec.to, previewId, { text: parts[0] }), true, 'editing the preview into the answer', 'edit');
        if (out.result.ok) {
          await this.d.log.mark(key, previewId);
          continue;
        }
        if (out.result.failure.kind !== 'rejected') {
          this.incomplete = true;
          return;
        }
        // the preview cannot be edited (deleted, too old): the first part goes as a message of its own
      }
      const sent = await this.sendOnce(key, `sending part ${i + 1} of ${parts.length}`, (k) =>
        conn.send(this.rec.to, { text: parts[i] }, { key: k, ...(i === 0 && this.rec.reply_to ? { replyTo: this.rec.reply_to } : {}) }),
      );
      if (sent === false) return; // later parts wait, so the answer never arrives out of order
    }
  }

  private async files(): Promise<void> {
    const { conn, service, signal } = this.d;
    const runId = this.rec.run_id;
    const manifest = (await service.manifest(runId).catch(() => null)) as { documents?: PublicDocument[] } | null;
    for (const doc of documentsForChat(manifest?.documents ?? [])) {
      if (signal.aborted) return;
      const key = `file:${doc.path}`;
      if (this.d.log.sentUnder(key) !== undefined) continue;
      const path = await service.documentPath(runId, doc.path);
      if (!path) continue;
      const file: OutboundFile = { name: chatFileName(doc.path), path, bytes: doc.bytes };
      await this.sendOnce(key, `sending ${file.name}`, (k) => conn.sendFile(this.rec.to, file, { key: k }));
    }
  }
}
