/**
 * AgentEvents → wire output through the one bridge: NDJSON (one frame per line), SSE frames, or
 * terminal text. Live `run --json` and `replay` both use it, so their bytes are identical.
 */
import type { AgentEvent } from '../events/agent-event.js';
import { createEngineBridge } from '../events/engine-bridge.js';
import { formatSseFrame } from '../channels/sse-adapter.js';
import { TerminalAdapter } from '../channels/terminal-adapter.js';
import type { CliOut } from './cli-io.js';

export type WireFormat = 'ndjson' | 'sse' | 'text';
export const WIRE_FORMATS: readonly WireFormat[] = ['ndjson', 'sse', 'text'];

export interface WireWriter {
  write(ev: AgentEvent): void;
  /** The run's error as the terminal showed it (text format), so the closing summary does not repeat it. */
  shownError?(): string | null;
}

/** `traceId`: the run's trace id (run_status.json `trace_id`); runs from before traces use their run id. */
export function createWireWriter(
  format: WireFormat,
  runId: string,
  out: CliOut,
  opts: { showReasoning?: boolean; tty?: boolean; traceId?: string } = {},
): WireWriter {
  const traceId = opts.traceId || runId;
  const bridge = createEngineBridge({ traceId });
  if (format === 'text') {
    const term = new TerminalAdapter({
      stream: out,
      traceId,
      showReasoning: opts.showReasoning ?? false,
      ...(opts.tty !== undefined ? { tty: opts.tty } : {}),
    });
    let shown: string | null = null;
    return {
      write(ev) {
        const e = bridge.translate(ev);
        if (!e) return;
        if (e.type === 'error') shown = e.diagnosis?.summary || e.message || null;
        term.emit(e);
      },
      shownError: () => shown,
    };
  }
  return {
    write(ev) {
      const e = bridge.translate(ev);
      if (!e) return;
      out.write(format === 'sse' ? formatSseFrame(e, { wireMeta: false }) : `${e.toWireJson('all')}\n`);
    },
  };
}
