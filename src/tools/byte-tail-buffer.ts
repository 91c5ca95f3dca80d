/**
 * The last `cap` bytes of a child's output, kept as the Buffers the pipe delivered: no decoding and
 * no copying per chunk, so draining gigabytes costs little more than reading them. Text is decoded
 * only when read, cut at UTF-8 character boundaries. Caps count bytes, so a text never exceeds the
 * same number of characters. `dropped` counts every byte cut from the front.
 */
export class ByteTailBuffer {
  private chunks: Buffer[] = [];
  private head = 0;
  private length = 0;
  private droppedWhole = 0;

  constructor(readonly cap: number) {
    if (!Number.isInteger(cap) || cap <= 0) throw new RangeError(`ByteTailBuffer cap must be a positive integer, got ${cap}`);
  }

  get size(): number {
    return Math.min(this.length, this.cap);
  }

  get dropped(): number {
    return this.droppedWhole + Math.max(0, this.length - this.cap);
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  append(b: Buffer): void {
    if (b.length === 0) return;
    this.chunks.push(b);
    this.length += b.length;
    while (this.chunks.length - this.head > 1 && this.length - this.chunks[this.head].length >= this.cap) {
      const gone = this.chunks[this.head++].length;
      this.length -= gone;
      this.droppedWhole += gone;
    }
    if (this.head > 64 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** The kept bytes (at most `cap`), as one Buffer. */
  bytes(): Buffer {
    const live = this.chunks.length - this.head;
    if (live === 0) return Buffer.alloc(0);
    let all = live === 1 ? this.chunks[this.head] : Buffer.concat(this.chunks.slice(this.head));
    if (all.length > this.cap) {
      this.droppedWhole += all.length - this.cap;
      all = all.subarray(all.length - this.cap);
    }
    this.chunks = [all];
    this.head = 0;
    this.length = all.length;
    return all;
  }

  /** Everything kept, decoded; a character cut at the front is skipped, one cut at the end kept out. */
  toString(): string {
    const b = this.bytes();
    return decodeWhole(b, this.truncated);
  }

  /** The last `n` bytes' worth of text (≤ n characters). */
  tail(n: number): string {
    let need = Math.min(n, this.cap);
    const parts: Buffer[] = [];
    for (let i = this.chunks.length - 1; i >= this.head && need > 0; i--) {
      const c = this.chunks[i];
      parts.push(c.length <= need ? c : c.subarray(c.length - need));
      need -= c.length;
    }
    const b = parts.length === 1 ? parts[0] : Buffer.concat(parts.reverse());
    return decodeWhole(b, b.length < this.length || this.droppedWhole > 0);
  }

  /**
   * Returns the text and empties the buffer, except for an unfinished character at the end, which
   * waits for its remaining bytes. `dropped` counts bytes cut since the last take.
   */
  take(): { text: string; dropped: number } {
    const b = this.bytes();
    const dropped = this.droppedWhole;
    const end = completeLength(b);
    const start = dropped > 0 ? skipContinuation(b) : 0;
    const text = b.subarray(Math.min(start, end), end).toString('utf8');
    const rest = b.subarray(end);
    this.chunks = rest.length ? [Buffer.from(rest)] : [];
    this.head = 0;
    this.length = rest.length;
    this.droppedWhole = 0;
    return { text, dropped };
  }
}

/** Index after the leading UTF-8 continuation bytes of a buffer whose front was cut. */
function skipContinuation(b: Buffer): number {
  let i = 0;
  while (i < b.length && i < 3 && (b[i] & 0xc0) === 0x80) i++;
  return i;
}

/** Length of the longest prefix that does not end inside a multi-byte character. */
export function completeLength(b: Buffer): number {
  const n = b.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const c = b[n - back];
    if ((c & 0xc0) === 0x80) continue; // continuation: look further back
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

function decodeWhole(b: Buffer, frontCut: boolean): string {
  const start = frontCut ? skipContinuation(b) : 0;
  return b.subarray(start).toString('utf8');
}
