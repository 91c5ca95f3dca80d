/**
 * The live preview of a run's reply in a chat: a status line (what the run does now) above the
 * answer's text so far. Always within the channel's limit — a long answer shows its end, marked as
 * cut — since a preview cut by the service (Telegram refuses more than 4,096) would never update again.
 * A run resumed after its process died says so in the status line, and the text of the turn it redoes
 * goes from the preview, so the chat never reads the same sentence twice.
 */
import type { AgentEvent, RunStatus } from '../../events/agent-event.js';

const STATUS_WORDS: Partial<Record<RunStatus, string>> = {
  queued: 'queued',
  created: 'starting',
  planning: 'planning',
  model_thinking: 'thinking',
  tool_executing: 'working',
  awaiting_approval: 'waiting for your approval',
  validating: 'checking the result',
};

export class ReplyPreview {
  private status: RunStatus = 'queued';
  private step = '';
  private answer = '';
  /** Where each delta began in `answer`, by its event's seq (what a resume discards from). */
  private readonly deltaStarts: Array<{ seq: number; at: number }> = [];
  /** The resumed attempt (0: never resumed). */
  private resumes = 0;

  /** Takes one event of the run; returns whether the preview changed. */
  apply(ev: AgentEvent): boolean {
    const before = this.key();
    if (ev.stream === 'run' && ev.data.type === 'run.state') this.status = ev.data.to;
    else if (ev.stream === 'assistant' && ev.data.delta) {
      this.deltaStarts.push({ seq: ev.seq, at: this.answer.length });
      this.answer += ev.data.delta;
    } else if (ev.stream === 'lifecycle' && ev.data.phase === 'resumed') this.resumed(ev.data.attempt, ev.data.discardFromSeq);
    else if (ev.stream === 'tool' && ev.data.phase === 'start') this.step = ev.data.name;
    else if (ev.stream === 'tool' && ev.data.phase === 'approval' && ev.data.approval.status === 'pending') this.step = ev.data.name;
    return this.key() !== before;
  }

  private resumed(attempt: number, discardFromSeq: number | null): void {
    this.resumes = attempt;
    if (discardFromSeq === null) return;
    const first = this.deltaStarts.findIndex((d) => d.seq >= discardFromSeq);
    if (first < 0) return;
    this.answer = this.answer.slice(0, this.deltaStarts[first].at);
    this.deltaStarts.length = first;
  }

  private key(): string {
    return `${this.status}\u0000${this.step}\u0000${this.answer.length}\u0000${this.resumes}\u0000${this.answer.slice(-32)}`;
  }

  /** The status line alone (the first preview, before anything happened). */
  statusLine(): string {
    const words = this.status === 'model_thinking' && this.answer.trim() ? 'writing' : (STATUS_WORDS[this.status] ?? this.status);
    const resumed = this.resumes ? `resumed after a restart${this.resumes > 1 ? ` (${this.resumes} times)` : ''} · ` : '';
    return `⏳ ${resumed}${words}${this.step ? ` · ${this.step}` : ''}`;
  }

  /** The preview's text, at most `limit` characters. */
  text(limit: number): string {
    const head = this.statusLine();
    const body = this.answer.trim();
    if (!body) return head.slice(0, limit);
    const room = limit - head.length - 2;
    if (room <= 1) return head.slice(0, limit);
    if (body.length <= room) return `${head}\n\n${body}`;
    // the end of what is written so far: the newest text is what a reader follows
    let tail = body.slice(body.length - (room - 1));
    const first = tail.charCodeAt(0);
    if (first >= 0xdc00 && first <= 0xdfff) tail = tail.slice(1); // no half of a surrogate pair
    return `${head}\n\n…${tail}`;
  }
}
