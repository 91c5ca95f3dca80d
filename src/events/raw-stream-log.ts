/**
 * Debug log of the raw model stream: with RUNTRAIL_RAW_STREAM=1 every assistant and
 * reasoning delta and each message end is appended to RUNTRAIL_RAW_STREAM_PATH (default
 * `<dataDir>/logs/raw-stream.jsonl`). Off, the factory returns null: nothing is subscribed.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgentEvent } from './agent-event.js';

export interface RawStreamLogOptions {
  dataDir: string;
  /** default process.env */
  env?: Record<string, string | undefined>;
  /** Told once per write failure; logging never breaks a run. */
  onError?: (error: unknown) => void;
}

export function isTruthyEnv(v: string | undefined): boolean {
  return v !== undefined && ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase());
}

export function rawStreamLogPath(dataDir: string, env: Record<string, string | undefined> = process.env): string {
  return env.RUNTRAIL_RAW_STREAM_PATH?.trim() || join(dataDir, 'logs', 'raw-stream.jsonl');
}

/** A bus subscriber (`bus.subscribe(logger)`), or null when the raw stream log is off. */
export function createRawStreamLogger(opts: RawStreamLogOptions): ((ev: AgentEvent) => void) | null {
  const env = opts.env ?? process.env;
  if (!isTruthyEnv(env.RUNTRAIL_RAW_STREAM)) return null;
  const path = rawStreamLogPath(opts.dataDir, env);
  let ready = false;
  const write = (line: Record<string, unknown>): void => {
    try {
      if (!ready) {
        mkdirSync(dirname(path), { recursive: true });
        ready = true;
      }
      // Sync on purpose: this is an opt-in debug log and lines must keep stream order.
      appendFileSync(path, `${JSON.stringify(line)}\n`);
    } catch (err) {
      opts.onError?.(err);
    }
  };
  return (ev) => {
    if (ev.stream === 'assistant') {
      if (ev.data.phase === 'end') write({ ts: ev.ts, event: 'assistant_message_end', runId: ev.runId, seq: ev.seq, rawText: ev.data.text });
      else if (ev.data.delta) write({ ts: ev.ts, event: 'assistant_text_stream', runId: ev.runId, seq: ev.seq, evtType: 'text_delta', delta: ev.data.delta });
    } else if (ev.stream === 'reasoning') {
      if (ev.data.phase === 'end') write({ ts: ev.ts, event: 'reasoning_end', runId: ev.runId, seq: ev.seq, rawThinking: ev.data.text });
      else if (ev.data.delta) write({ ts: ev.ts, event: 'reasoning_stream', runId: ev.runId, seq: ev.seq, evtType: 'reasoning_delta', delta: ev.data.delta });
    }
  };
}
