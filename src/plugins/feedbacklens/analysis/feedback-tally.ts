/**
 * What one look at each row gives the analysis, kept without the rows: ratings (8 bytes a row,
 * for the per-theme figures later), their distribution, channels and the date range.
 */
export interface TalliedRow {
  rating: number | null;
  channel: string | null;
  date: string | null;
  /** the file's other columns: the few-valued ones are segments a goal may name (plan, region, …) */
  extra?: Record<string, string>;
}

/** A column with more distinct values than this is no segment (ids, free text, dates). */
export const SEGMENT_MAX_VALUES = 20;

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
  /** extra column → value → rows; null once the column has too many values to be a segment */
  readonly extraValues = new Map<string, Map<string, number> | null>();
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
    if (r.extra) {
      for (const [col, raw] of Object.entries(r.extra)) {
        const v = raw.trim();
        if (!v) continue;
        let values = this.extraValues.get(col);
        if (values === null) continue;
        if (!values) this.extraValues.set(col, (values = new Map()));
        values.set(v, (values.get(v) ?? 0) + 1);
        if (values.size > SEGMENT_MAX_VALUES || v.length > 40) this.extraValues.set(col, null);
      }
    }
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
