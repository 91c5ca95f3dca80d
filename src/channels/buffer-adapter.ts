/**
 * IM-bot claw: buffers a whole run into one message. Deltas accumulate, reasoning is
 * dropped unless asked, an error-level step diagnosis becomes a footnote, `done.content` wins.
 */
import type { EngineEvent } from '../events/engine-event.js';
import { BaseClawAdapter, type ClawAdapterOptions } from './base-claw-adapter.js';

export interface BufferAdapterOptions extends ClawAdapterOptions {
  keepReasoning?: boolean;
  keepDiagnosis?: boolean;
}

export interface AssembledMedia {
  text: string;
  media: string[];
}

const MEDIA_LINE = /^\s*MEDIA:\s*(\S.*?)\s*$/;

export class BufferAdapter extends BaseClawAdapter {
  readonly claw = 'im';
  private readonly keepReasoning: boolean;
  private readonly keepDiagnosis: boolean;
  private deltas = '';
  /** where each delta and reasoning part began, by seq: a resumed run's discarded ones are cut off */
  private readonly starts: Array<{ seq: number; deltas: number; reasoning: number }> = [];
  private reasoning = '';
  /** a step or text came since the last reasoning: the next reasoning starts a paragraph */
  private reasoningEnded = false;
  private doneContent: string | null = null;
  private readonly footnotes: string[] = [];
  private finished = false;

  constructor(opts: BufferAdapterOptions = {}) {
    super(opts);
    this.keepReasoning = opts.keepReasoning ?? false;
    this.keepDiagnosis = opts.keepDiagnosis ?? true;
  }

  /** True once a done or error frame arrived. */
  get isFinished(): boolean {
    return this.finished;
  }

  protected handle(ev: EngineEvent): void {
    if ((ev.type === 'delta' || ev.type === 'reasoning') && ev.seq)
      this.starts.push({ seq: ev.seq, deltas: this.deltas.length, reasoning: this.reasoning.length });
    switch (ev.type) {
      case 'delta':
        this.deltas += ev.content;
        this.reasoningEnded = true;
        return;
      case 'reasoning':
        if (!this.keepReasoning) return;
        // a later turn's reasoning is a paragraph of its own ("…the evidence index." / "Step 2: …")
        if (this.reasoningEnded && this.reasoning && !/\s$/.test(this.reasoning)) this.reasoning += '\n\n';
        this.reasoningEnded = false;
        this.reasoning += ev.content;
        return;
      case 'step':
        this.discardRedone(ev);
        this.reasoningEnded = true;
        if (this.keepDiagnosis && ev.step?.diagnosis?.severity === 'error') this.footnote(ev.toText());
        return;
      case 'done':
        this.finished = true;
        if (ev.content) this.doneContent = ev.content;
        return;
      case 'error':
        this.finished = true;
        this.footnote(ev.toText());
        return;
      case 'process':
        return;
    }
  }

  /** A run resumed after its process died redoes the turn that was streaming: its partial text goes. */
  private discardRedone(ev: EngineEvent): void {
    const from = ev.step?.name === 'resume' ? ev.step.args.discard_from_seq : undefined;
    if (typeof from !== 'number') return;
    const first = this.starts.find((x) => x.seq >= from);
    if (!first) return;
    this.deltas = this.deltas.slice(0, first.deltas);
    this.reasoning = this.reasoning.slice(0, first.reasoning);
    this.starts.splice(this.starts.indexOf(first));
  }

  private footnote(text: string): void {
    if (text && !this.footnotes.includes(text)) this.footnotes.push(text);
  }

  /** The reply: a string, or `{ text, media }` when it carries `MEDIA: <path|url>` lines. */
  assemble(): string | AssembledMedia {
    const body = this.doneContent ?? this.deltas;
    const media: string[] = [];
    const lines: string[] = [];
    for (const line of body.split('\n')) {
      const m = MEDIA_LINE.exec(line);
      if (m) media.push(m[1]);
      else lines.push(line);
    }
    const parts: string[] = [];
    if (this.keepReasoning && this.reasoning.trim()) parts.push(`💭 ${this.reasoning.trim()}`);
    const text = lines.join('\n').trim();
    if (text) parts.push(text);
    parts.push(...this.footnotes);
    const out = parts.join('\n\n');
    return media.length ? { text: out, media } : out;
  }
}
