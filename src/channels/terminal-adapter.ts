/**
 * CLI claw: live text, one line per finished step (✓/✗), and for running process events a progress
 * bar redrawn in place on a TTY, or plain lines otherwise (pipes, CI logs).
 */
import type { EngineEvent } from '../events/engine-event.js';
import type { RuntimeProcessEvent } from '../events/process-event.js';
import { BaseClawAdapter, type ClawAdapterOptions } from './base-claw-adapter.js';

export interface TerminalStream {
  write(chunk: string): unknown;
  /** Writes the adapter's own cursor control as it is (a stream that cleans what it prints keeps this apart). */
  writeControl?(seq: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface TerminalAdapterOptions extends ClawAdapterOptions {
  stream?: TerminalStream;
  /** default: stream.isTTY */
  tty?: boolean;
  /** ANSI colours; default: tty and NO_COLOR unset */
  color?: boolean;
  showReasoning?: boolean;
}

const BAR_WIDTH = 20;

export function progressBar(percent: number, width = BAR_WIDTH): string {
  const p = Math.max(0, Math.min(100, percent));
  const full = Math.round((p / 100) * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}] ${p.toFixed(0).padStart(3)}%`;
}

function firstLine(s: string, max = 100): string {
  const line = s.split('\n').find((l) => l.trim()) ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export class TerminalAdapter extends BaseClawAdapter {
  readonly claw = 'cli';
  private readonly out: TerminalStream;
  private readonly tty: boolean;
  private readonly color: boolean;
  private readonly showReasoning: boolean;
  private atLineStart = true;
  /** a progress/status line is on screen and will be overwritten */
  private transient = false;
  /** the last failed step and its reason (a run error repeating it points here instead) */
  private lastFailure: { label: string; why: string } | null = null;
  private sawText = false;

  constructor(opts: TerminalAdapterOptions = {}) {
    super(opts);
    this.out = opts.stream ?? process.stdout;
    this.tty = opts.tty ?? this.out.isTTY === true;
    this.color = opts.color ?? (this.tty && !process.env.NO_COLOR);
    this.showReasoning = opts.showReasoning ?? false;
  }

  protected handle(ev: EngineEvent): void {
    switch (ev.type) {
      case 'delta':
        if (ev.content) {
          this.sawText = true;
          this.text(ev.content);
        }
        return;
      case 'reasoning':
        if (this.showReasoning && ev.content) this.text(this.paint(ev.content, '2'));
        return;
      case 'step':
        return this.step(ev);
      case 'process':
        if (ev.event) this.process(ev.event);
        return;
      case 'done':
        if (!this.sawText && ev.content) this.text(ev.content);
        this.line('');
        return;
      case 'error': {
        const d = ev.diagnosis;
        this.line(this.paint(`✗ ${this.notAgain(d?.summary || ev.message)}`, '31'));
        if (d?.detail) this.line(`  ${d.detail.split('\n').join('\n  ')}`);
        if (d?.hint) this.line(this.paint(`  hint: ${d.hint}`, '2'));
        return;
      }
    }
  }

  private step(ev: EngineEvent): void {
    const s = ev.step;
    if (!s) return;
    const label = s.kind === 'mcp' ? `${s.server}/${s.name}` : s.name || s.kind;
    if (s.phase === 'start') {
      if (this.tty) this.status(this.paint(`… ${label}`, '2'));
      return;
    }
    if (s.kind === 'thinking') {
      if (this.showReasoning && s.text) this.line(this.paint(`💭 ${firstLine(s.text)}`, '2'));
      return;
    }
    if (s.name === 'resume' && s.kind === 'agent') {
      // a terminal cannot take back what it printed: it says which text is void, and what was lost
      const partial = typeof s.args.discard_from_seq === 'number' ? ' — the partial answer above is discarded and redone' : '';
      this.line(this.paint(`↺ ${s.result || 'run resumed'}${partial}`, '33'));
      if (s.diagnosis?.detail) this.line(this.paint(`  ${s.diagnosis.detail.split('\n').join('\n  ')}`, '2'));
      return;
    }
    const failed = s.phase === 'fail' || s.diagnosis?.severity === 'error';
    if (failed) {
      const why = s.diagnosis?.summary || firstLine(s.result);
      if (why) this.lastFailure = { label, why };
      this.line(this.paint(`✗ ${label}${why ? ` — ${why}` : ''}`, '31'));
      if (s.diagnosis?.detail) this.line(this.paint(`  ${s.diagnosis.detail.split('\n').join('\n  ')}`, '2'));
    } else {
      const res = firstLine(s.result, 80);
      this.line(`${this.paint('✓', '32')} ${label}${res ? this.paint(` — ${res}`, '2') : ''}`);
    }
  }

  /**
   * A run's error that repeats the failed step just printed ("…cannot be analysed: <the step's
   * reason>") points at that line instead of saying the reason a second time.
   */
  private notAgain(summary: string): string {
    const f = this.lastFailure;
    if (!f || f.why.length < 20) return summary;
    const at = summary.indexOf(f.why);
    if (at <= 0) return summary;
    const head = summary.slice(0, at).replace(/[:\s]+$/, '');
    return `${head} (${f.label}, above)${summary.slice(at + f.why.length)}`;
  }

  private process(p: RuntimeProcessEvent): void {
    // the run's own failure: its error frame says why, once (this line would repeat the message)
    if (p.targetType === 'runtime' && p.parentOperationId === undefined && (p.status === 'failed' || p.status === 'cancelled')) return;
    const what = p.stage ? `${p.operationId} ${p.stage}` : p.operationId;
    const msg = p.message ? ` ${p.message}` : '';
    const terminal = p.status === 'completed' || p.status === 'failed' || p.status === 'cancelled' || p.status === 'skipped';
    if (!this.tty) {
      const pct = p.percent !== undefined ? ` ${p.percent.toFixed(0)}%` : '';
      this.line(`  [${p.status}]${pct} ${what}${msg ? ` —${msg}` : ''}`);
      return;
    }
    if (terminal) {
      this.clearTransient();
      if (p.status === 'failed') this.line(this.paint(`  ✗ ${what}${msg}`, '31'));
      return;
    }
    const bar = p.percent !== undefined ? `${progressBar(p.percent)} ` : '';
    this.status(`  ${bar}${what}${msg}`);
  }

  private paint(s: string, code: string): string {
    return this.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  }

  private clearTransient(): void {
    if (this.transient) {
      if (this.out.writeControl) this.out.writeControl('\r\x1b[2K');
      else this.out.write('\r\x1b[2K');
      this.transient = false;
    }
  }

  /** A line that the next output overwrites (TTY only). */
  private status(s: string): void {
    this.clearTransient();
    if (!this.atLineStart) {
      this.out.write('\n');
      this.atLineStart = true;
    }
    const cols = this.out.columns ?? 100;
    // Never wrap: a wrapped status line cannot be erased with \r.
    this.out.write(s.length > cols - 1 ? s.slice(0, cols - 1) : s);
    this.transient = true;
  }

  private text(s: string): void {
    this.clearTransient();
    this.out.write(s);
    this.atLineStart = s.endsWith('\n');
  }

  /** Writes s on a line of its own ('' just ends the current line). */
  private line(s: string): void {
    this.clearTransient();
    if (!this.atLineStart) this.out.write('\n');
    if (s) this.out.write(`${s}\n`);
    this.atLineStart = true;
  }
}
