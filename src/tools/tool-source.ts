/**
 * Tools that are not known when a run is created: an MCP server's tools exist only once the server
 * is connected, and can change while the run goes (`notifications/tools/list_changed`). A source
 * is opened by the engine before the first model turn; the executor shows its tools from then on.
 */
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { AnyToolDefinition } from './tool.js';

export interface ToolSource {
  /** Who it is, in diagnoses: e.g. `mcp:everything`. */
  readonly name: string;
  /** The tool names or globs it may add (e.g. `mcp__everything__*`), as the capability snapshot lists them. */
  readonly grants: readonly string[];
  /** What runtime/resolved_config.json shows of it; never a secret (names of env vars and headers only). */
  describe(): Record<string, unknown>;
  /** Connects when needed and gives its current tools; rejects with a ToolSourceError when it cannot. */
  open(signal: AbortSignal): Promise<AnyToolDefinition[]>;
  /** Told the source's new tools whenever they change; the next model turn sees them. */
  onChange?(listener: (tools: AnyToolDefinition[]) => void): void;
  /** The run is done with it. Never rejects. */
  close(): Promise<void>;
}

/** A source that cannot give its tools, with the diagnosis the run fails with. */
export class ToolSourceError extends Error {
  constructor(readonly diagnosis: DiagnosisInit) {
    super(diagnosis.summary);
    this.name = 'ToolSourceError';
  }
}
