/** The connection could not be made (the server did not start, answer or connect); `diagnosis` is the run's `mcp_unavailable`. */
import type { DiagnosisInit } from '../events/diagnosis.js';

export class McpUnavailableError extends Error {
  constructor(readonly diagnosis: DiagnosisInit) {
    super(diagnosis.summary);
    this.name = 'McpUnavailableError';
  }
}
