/**
 * Strips thinking blocks from streamed assistant text: `<think>`, `<thinking>`,
 * `<thought>`, `<antthinking>`, even when a tag is split across deltas; tags inside code (fenced or
 * inline) are left alone; `<final>` tags are removed and, with enforceFinalTag, only their content
 * passes.
 */
export interface ThinkingTagFilterOptions {
  enforceFinalTag?: boolean;
}

const ALL_NAMES = ['think', 'thinking', 'thought', 'antthinking', 'final'];
const TAG = /^<\s*(\/?)\s*(antthinking|thinking|thought|think|final)\b[^<>]*>/i;
const CLOSE_THINK = /<\s*\/\s*(antthinking|thinking|thought|think)\s*>/i;

/** Could `s` (starting with '<', no '>') still grow into one of our tags? */
function couldBeTag(s: string): boolean {
  if (s.length > 40 || s.includes('>')) return false;
  const m = /^<\s*\/?\s*([a-zA-Z]*)(\s[^<>]*)?$/.exec(s);
  if (!m) return false;
  const name = m[1].toLowerCase();
  if (m[2] !== undefined) return ALL_NAMES.includes(name);
  return ALL_NAMES.some((n) => n.startsWith(name));
}

export class ThinkingTagFilter {
  private readonly enforceFinal: boolean;
  private pending = '';
  private inThinking = false;
  private inFinal = false;
  /** open fence marker char and length, e.g. ['`', 3] */
  private fence: [string, number] | null = null;
  private inlineTicks = 0;
  private lineStart = true;
  private thinking = '';

  constructor(opts: ThinkingTagFilterOptions = {}) {
    this.enforceFinal = opts.enforceFinalTag ?? false;
  }

  /** Returns the visible text this delta adds (may be '' while a tag is still incomplete). */
  push(delta: string): string {
    if (typeof delta !== 'string') throw new TypeError(`ThinkingTagFilter.push: delta must be a string, got ${typeof delta}`);
    // Fast path: nothing held back and no character that could start a tag or code marker.
    if (!this.pending && !this.inThinking && delta !== '' && !/[<`~]/.test(delta)) {
      this.lineStart = delta.endsWith('\n');
      if (delta.includes('\n')) this.inlineTicks = 0;
      return this.visible() ? delta : '';
    }
    const s = this.pending + delta;
    this.pending = '';
    return this.scan(s, false);
  }

  /** What was held back (an incomplete tag that never completed); '' inside an open thinking block. */
  flush(): string {
    const s = this.pending;
    this.pending = '';
    return this.scan(s, true);
  }

  /** The thinking text removed so far, cleared on read (e.g. to route it to the reasoning stream). */
  takeThinking(): string {
    const t = this.thinking;
    this.thinking = '';
    return t;
  }

  private visible(): boolean {
    return !this.enforceFinal || this.inFinal;
  }

  private scan(s: string, final: boolean): string {
    let out = '';
    let i = 0;
    const n = s.length;
    while (i < n) {
      if (this.inThinking) {
        const rest = s.slice(i);
        const m = CLOSE_THINK.exec(rest);
        if (m) {
          this.thinking += rest.slice(0, m.index);
          this.inThinking = false;
          i += m.index + m[0].length;
          continue;
        }
        const lt = rest.lastIndexOf('<');
        if (!final && lt !== -1 && couldBeTag(rest.slice(lt))) {
          this.thinking += rest.slice(0, lt);
          this.pending = rest.slice(lt);
        } else {
          this.thinking += rest;
        }
        return out;
      }
      const ch = s[i];
      // Fence lines toggle code blocks; inside one everything is literal.
      if (this.lineStart && (ch === '`' || ch === '~') && this.inlineTicks === 0) {
        let j = i;
        while (j < n && s[j] === ch) j++;
        if (j === n && !final) {
          this.pending = s.slice(i);
          return out;
        }
        const len = j - i;
        if (len >= 3) {
          if (!this.fence) this.fence = [ch, len];
          else if (this.fence[0] === ch && len >= this.fence[1]) this.fence = null;
          if (this.visible()) out += s.slice(i, j);
          this.lineStart = false;
          i = j;
          continue;
        }
      }
      if (this.fence) {
        if (this.visible()) out += ch;
        this.lineStart = ch === '\n';
        i++;
        continue;
      }
      if (ch === '`') {
        let j = i;
        while (j < n && s[j] === '`') j++;
        if (j === n && !final) {
          this.pending = s.slice(i);
          return out;
        }
        const len = j - i;
        if (this.inlineTicks === 0) this.inlineTicks = len;
        else if (this.inlineTicks === len) this.inlineTicks = 0;
        if (this.visible()) out += s.slice(i, j);
        this.lineStart = false;
        i = j;
        continue;
      }
      if (ch === '<' && this.inlineTicks === 0) {
        const rest = s.slice(i);
        const m = TAG.exec(rest);
        if (m) {
          const closing = m[1] === '/';
          const name = m[2].toLowerCase();
          if (name === 'final') this.inFinal = !closing;
          else if (!closing) this.inThinking = true;
          // a stray closing thinking tag is just dropped
          i += m[0].length;
          continue;
        }
        if (!final && couldBeTag(rest)) {
          this.pending = rest;
          return out;
        }
      }
      if (this.visible()) out += ch;
      this.lineStart = ch === '\n';
      // An unbalanced backtick must not disable stripping for the rest of the reply.
      if (this.lineStart) this.inlineTicks = 0;
      i++;
    }
    return out;
  }
}
