/**
 * Keeps the last `cap` characters of a stream in amortised O(1) per append: chunks are joined
 * only when twice the cap has piled up. `dropped` counts every character cut from the front.
 */
export class TailBuffer {
  private chunks: string[] = [];
  private length = 0;
  dropped = 0;

  constructor(readonly cap: number) {
    if (!Number.isInteger(cap) || cap <= 0) throw new RangeError(`TailBuffer cap must be a positive integer, got ${cap}`);
  }

  get size(): number {
    return Math.min(this.length, this.cap);
  }

  get truncated(): boolean {
    return this.dropped > 0 || this.length > this.cap;
  }

  append(s: string): void {
    if (s.length === 0) return;
    if (s.length >= this.cap) {
      this.dropped += this.length + s.length - this.cap;
      this.chunks = [s.length === this.cap ? s : s.slice(s.length - this.cap)];
      this.length = this.cap;
      return;
    }
    this.chunks.push(s);
    this.length += s.length;
    if (this.length > this.cap * 2) this.compact();
  }

  toString(): string {
    this.compact();
    return this.chunks.length === 0 ? '' : this.chunks[0];
  }

  /** The last `n` characters (n ≤ cap). */
  tail(n: number): string {
    const all = this.toString();
    return all.length <= n ? all : all.slice(all.length - n);
  }

  /** Returns the content and empties the buffer; `dropped` counts cuts since the last take. */
  take(): { text: string; dropped: number } {
    const text = this.toString();
    const dropped = this.dropped;
    this.chunks = [];
    this.length = 0;
    this.dropped = 0;
    return { text, dropped };
  }

  private compact(): void {
    if (this.chunks.length === 0) return;
    let joined = this.chunks.length === 1 ? this.chunks[0] : this.chunks.join('');
    if (joined.length > this.cap) {
      this.dropped += joined.length - this.cap;
      joined = joined.slice(joined.length - this.cap);
    }
    this.chunks = [joined];
    this.length = joined.length;
  }
}
