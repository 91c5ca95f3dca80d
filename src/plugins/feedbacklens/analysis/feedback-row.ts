/** One normalised feedback row: what every tool, the evidence index and the validators agree on. */
export interface FeedbackRow {
  feedback_id: string;
  /** 1-based position among the data rows of the source file. */
  row: number;
  text: string;
  rating: number | null;
  channel: string | null;
  date: string | null;
  /** Every other column, verbatim. */
  extra: Record<string, string>;
}

/** Where ids came from: a column of the file, or generated from row positions. */
export type IdSource = 'column' | 'generated';
