/** A server that cannot be used now (it did not start, answer or connect), with the diagnosis that says why. */
import type { DiagnosisInit } from '../events/diagnosis.js';

export class McpUnavailableError extends Error {
  constructor(readonly diagnosis: DiagnosisInit) {
    super(diagnosis.summary);
    this.name = 'McpUnavailableError';
  }
}
