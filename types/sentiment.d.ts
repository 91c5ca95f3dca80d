// Ambient types for the untyped `sentiment` package (AFINN-165 lexicon scorer), only what Runtrail uses.
declare module 'sentiment' {
  interface SentimentResult {
    score: number;
    comparative: number;
    tokens: string[];
    words: string[];
    positive: string[];
    negative: string[];
    calculation: Array<Record<string, number>>;
  }
  interface AnalyzeOptions {
    language?: string;
  }
  class Sentiment {
    constructor(options?: Record<string, unknown>);
    analyze(phrase: string, opts?: AnalyzeOptions): SentimentResult;
  }
  export = Sentiment;
}
