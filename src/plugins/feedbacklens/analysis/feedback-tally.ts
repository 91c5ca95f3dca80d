/**
 * What one look at each row gives the analysis, kept without the rows: ratings (8 bytes a row,
 * for the per-theme figures later), their distribution, channels and the date range.
 */
export interface TalliedRow {
  rating: number | null;
  channel: string | null;
  date: string | null;
}

export class FeedbackTally {
  /** rows added */
  n = 0;
  readonly ratingDistribution: Record<string, number> = {};
  ratingSum = 0;
  ratingCount = 0;
  maxRating: number | null = null;
  readonly channels: Record<string, number> = {};
  from: string | null = null;
  to: string | null = null;
  /** NaN where a row has no rating (parsed ratings are always finite) */
  private ratings = new Float64Array(1024);

  add(r: TalliedRow): void {
    if (this.n === this.ratings.length) {
      const next = new Float64Array(this.ratings.length * 2);
      next.set(this.ratings);
      this.ratings = next;
    }
    this.ratings[this.n++] = r.rating ?? Number.NaN;
    if (r.rating !== null) {
      this.ratingDistribution[String(r.rating)] = (this.ratingDistribution[String(r.rating)] ?? 0) + 1;
      this.ratingSum += r.rating;
      this.ratingCount++;
      if (this.maxRating === null || r.rating > this.maxRating) this.maxRating = r.rating;
    }
    if (r.channel) this.channels[r.channel] = (this.channels[r.channel] ?? 0) + 1;
    if (r.date) {
      if (this.from === null || r.date < this.from) this.from = r.date;
      if (this.to === null || r.date > this.to) this.to = r.date;
    }
  }

  /** Row i's rating, or null. */
  rating(i: number): number | null {
    const v = this.ratings[i];
    return Number.isNaN(v) ? null : v;
  }
}
