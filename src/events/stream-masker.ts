/**
 * Masking for text that arrives in pieces (a command's output read poll by poll): a secret written
 * in two pieces — or one character at a time — is masked as if it had come whole. Each piece is
 * matched together with the text before it (kept up to a few times the longest form), and the end of
 * a piece that may be the start of a form is held back until the next piece says whether it is; `end`
 * gives what is held, masked.
 */
import { SECRET_MASK, type SecretMasker, serverSecrets } from './secret-masker.js';

export class StreamMasker {
  /** Text already given out, unmasked, kept to match what comes next against. */
  private before = '';
  /** Text held back: it may be the start of a form. */
  private held = '';

  constructor(private readonly masker: SecretMasker = serverSecrets) {}

  /** `piece` masked in the light of what came before; its end may be held for the next call. */
  push(piece: string): string {
    if (this.masker.size === 0) return this.held + piece;
    const raw = this.held + piece;
    const full = this.before + raw;
    const start = this.before.length;
    const spans = this.masker.spans(full);
    const lastEnd = spans.length ? spans[spans.length - 1][1] : 0;
    // what a whole match covers is not held: only a form's start after the last match is
    const stop = Math.max(start, lastEnd, this.masker.formStartAt(full));
    const out = this.cut(full, start, stop, spans);
    this.held = full.slice(stop);
    this.before = full.slice(0, stop).slice(-4 * this.masker.longestForm);
    return out;
  }

  /** What is held, masked: the stream has ended (or its reader wants everything now). */
  end(): string {
    const full = this.before + this.held;
    const out = this.cut(full, this.before.length, full.length, this.masker.spans(full));
    this.before = full.slice(-4 * this.masker.longestForm);
    this.held = '';
    return out;
  }

  /** full[from, to) with every span's part inside it masked (a span reaching in from before shows as the mask too). */
  private cut(full: string, from: number, to: number, spans: Array<[number, number]>): string {
    let out = '';
    let at = from;
    for (const [a, b] of spans) {
      if (b <= at || a >= to) continue;
      out += full.slice(at, Math.max(at, a)) + SECRET_MASK;
      at = Math.min(b, to);
    }
    return out + full.slice(at, to);
  }
}
