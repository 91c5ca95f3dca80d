/**
 * Splits streamed assistant text into reply blocks for chat channels: breaks at
 * paragraph → newline → sentence → whitespace → hard cut, never inside a fenced code block. A fence
 * longer than maxChars is closed at the cut and reopened (with its opening line) in the next chunk.
 */
export type BreakPreference = 'paragraph' | 'newline' | 'sentence';

export interface BlockChunkerOptions {
  minChars?: number;
  maxChars?: number;
  breakPreference?: BreakPreference;
}

interface Fence {
  /** index of the opening line's first char */
  start: number;
  /** index just past the closing line, or Infinity while open */
  end: number;
  /** the opening line without its newline, e.g. "```ts" */
  openLine: string;
  /** the closing marker, e.g. "```" */
  marker: string;
}

const FENCE_LINE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  let open: Fence | null = null;
  let pos = 0;
  while (pos <= text.length) {
    let nl = text.indexOf('\n', pos);
    const complete = nl !== -1;
    if (!complete) nl = text.length;
    const line = text.slice(pos, nl);
    const m = FENCE_LINE.exec(line);
    if (m) {
      if (!open) {
        // An unfinished last line could still grow, but a fence start is a fence start.
        open = { start: pos, end: Infinity, openLine: line, marker: m[2] };
      } else if (m[2][0] === open.marker[0] && m[2].length >= open.marker.length && m[3].trim() === '' && complete) {
        open.end = nl + 1;
        fences.push(open);
        open = null;
      }
    }
    if (!complete) break;
    pos = nl + 1;
  }
  if (open) fences.push(open);
  return fences;
}

function fenceAt(fences: Fence[], i: number): Fence | null {
  for (const f of fences) if (i > f.start && i < f.end) return f;
  return null;
}

const SENTENCE_END = /[.!?。！？…](?=\s)/g;

export class BlockChunker {
  readonly minChars: number;
  readonly maxChars: number;
  readonly breakPreference: BreakPreference;
  private buf = '';

  constructor(opts: BlockChunkerOptions = {}) {
    this.minChars = opts.minChars ?? 800;
    this.maxChars = opts.maxChars ?? 1200;
    this.breakPreference = opts.breakPreference ?? 'paragraph';
    if (!Number.isInteger(this.minChars) || this.minChars < 1)
      throw new TypeError(`BlockChunker: minChars must be a positive integer, got ${String(opts.minChars)}`);
    if (!Number.isInteger(this.maxChars) || this.maxChars < this.minChars || this.maxChars < 20) {
      throw new TypeError(`BlockChunker: maxChars must be an integer >= minChars and >= 20, got ${String(opts.maxChars)}`);
    }
    if (!['paragraph', 'newline', 'sentence'].includes(this.breakPreference)) {
      throw new TypeError(`BlockChunker: breakPreference must be one of paragraph|newline|sentence, got ${JSON.stringify(opts.breakPreference)}`);
    }
  }

  get buffered(): number {
    return this.buf.length;
  }

  hasBuffered(): boolean {
    return this.buf.length > 0;
  }

  reset(): void {
    this.buf = '';
  }

  /** Adds text; returns the chunks that are ready now. */
  push(text: string): string[] {
    if (typeof text !== 'string') throw new TypeError(`BlockChunker.push: text must be a string, got ${typeof text}`);
    this.buf += text;
    return this.take(false);
  }

  /** Ready chunks; with force, everything left (the stream ended). */
  drain(opts: { force?: boolean } = {}): string[] {
    const out = this.take(!!opts.force);
    if (opts.force) {
      const rest = this.buf.replace(/^\n+/, '').trimEnd();
      this.buf = '';
      if (rest) out.push(rest);
    }
    return out;
  }

  private take(force: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      const threshold = force ? this.maxChars + 1 : this.minChars;
      if (this.buf.length < threshold) break;
      const chunk = this.cutOnce(force);
      if (chunk === null) break;
      if (chunk) out.push(chunk);
    }
    return out;
  }

  /** One cut from the front of the buffer; null when it should wait for more text. */
  private cutOnce(force: boolean): string | null {
    const text = this.buf;
    const fences = findFences(text);
    const limit = Math.min(this.maxChars, text.length);
    const ok = (i: number): boolean => i >= this.minChars && i <= limit && !fenceAt(fences, i);

    const order: Array<'paragraph' | 'newline' | 'sentence' | 'space'> =
      this.breakPreference === 'paragraph'
        ? ['paragraph', 'newline', 'sentence', 'space']
        : this.breakPreference === 'newline'
          ? ['newline', 'sentence', 'space']
          : ['sentence', 'newline', 'space'];
    // A break at the very end of the buffer is only certain once more text proved it a break.
    const lastUsable = text.length > limit ? limit : text.length - 1;
    for (const kind of order) {
      const c = this.lastBreak(text, kind, lastUsable, ok);
      if (c !== -1) return this.split(c, kind === 'space' || kind === 'sentence');
    }
    if (text.length <= this.maxChars && !force) return null;

    // No soft break: prefer cutting just before a fence that straddles the limit.
    const f = fenceAt(fences, limit);
    if (f && f.start > 0) return this.split(f.start, false);
    if (f && f.openLine.length < this.maxChars / 2) {
      // The fence itself is too long: close it here and reopen it in the next chunk.
      let c = text.lastIndexOf('\n', limit - f.marker.length - 2);
      if (c <= f.start + f.openLine.length) c = limit - f.marker.length - 1;
      const head = text.slice(0, c);
      const rest = text.slice(c).replace(/^\n/, '');
      this.buf = `${f.openLine}\n${rest}`;
      return `${head}${head.endsWith('\n') ? '' : '\n'}${f.marker}`;
    }
    return this.split(limit, false);
  }

  private lastBreak(text: string, kind: 'paragraph' | 'newline' | 'sentence' | 'space', last: number, ok: (i: number) => boolean): number {
    if (kind === 'sentence') {
      let best = -1;
      SENTENCE_END.lastIndex = 0;
      for (let m = SENTENCE_END.exec(text); m && m.index < last; m = SENTENCE_END.exec(text)) if (ok(m.index + 1)) best = m.index + 1;
      return best;
    }
    const needle = kind === 'paragraph' ? '\n\n' : kind === 'newline' ? '\n' : ' ';
    for (let i = text.lastIndexOf(needle, last); i >= this.minChars; i = text.lastIndexOf(needle, i - 1)) {
      if (ok(i)) return i;
      if (i === 0) break;
    }
    return -1;
  }

  /** Cuts at c; the next chunk loses the break itself (newlines, or spaces after a sentence/word). */
  private split(c: number, inLine: boolean): string {
    const chunk = this.buf.slice(0, c).trimEnd();
    this.buf = this.buf.slice(c).replace(inLine ? /^[ \t]+/ : /^\n+/, '');
    return chunk;
  }
}
