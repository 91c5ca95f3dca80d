/** Shapes the page reads off the wire (wire frames as JSON); DOM-free so tests can import them. */
export interface WireFrame {
  type: string;
  [k: string]: unknown;
}

export interface Diagnosis {
  code: string;
  severity: string;
  summary: string;
  detail?: string;
  hint?: string;
  retryable?: boolean;
}
