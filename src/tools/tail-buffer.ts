/**
 * Keeps the last `cap` characters of a stream without copying on append: whole chunks fall off the
 * front once the rest already covers the cap, and the text is joined only when read. Memory stays
 * below cap + one chunk. `dropped` counts every character cut from the front.
 */
const SMALL_CHUNK = 1024;

export class TailBuffer {
  private chunks: string[] = [];
  private head = 0;
  private length = 0;
  private droppedWhole = 0;

  constructor(readonly cap: number) {
    if (!Number.isInteger(cap) || cap <= 0) throw new RangeError(`TailBuffer cap must be a positive integer, got ${cap}`);
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

  append(s: string): void {
    if (s.length === 0) return;
    const last = this.chunks.length - 1;
    // Merge tiny chunks (pty, line-by-line writers) so the array stays short.
    if (last >= this.head && this.chunks[last].length < SMALL_CHUNK && s.length < SMALL_CHUNK) this.chunks[last] += s;
    else this.chunks.push(s);
    this.length += s.length;
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

  toString(): string {
    const n = this.chunks.length - this.head;
    if (n === 0) return '';
    let joined = n === 1 ? this.chunks[this.head] : this.chunks.slice(this.head).join('');
    if (joined.length > this.cap) {
      this.droppedWhole += joined.length - this.cap;
      joined = joined.slice(joined.length - this.cap);
    }
    this.chunks = [joined];
    this.head = 0;
    this.length = joined.length;
    return joined;
  }

  /** The last `n` characters (n ≤ cap), joining only the chunks needed. */
  tail(n: number): string {
    let need = Math.min(n, this.cap);
    const parts: string[] = [];
    for (let i = this.chunks.length - 1; i >= this.head && need > 0; i--) {
      const c = this.chunks[i];
      parts.push(c.length <= need ? c : c.slice(c.length - need));
      need -= c.length;
    }
    return parts.reverse().join('');
  }

  /** Returns the content and empties the buffer; `dropped` counts cuts since the last take. */
  take(): { text: string; dropped: number } {
    const text = this.toString();
    const dropped = this.droppedWhole;
    this.chunks = [];
    this.head = 0;
    this.length = 0;
    this.droppedWhole = 0;
    return { text, dropped };
  }
}
