/**
 * runtime/trace.jsonl, a flat projection of events.jsonl for tools that want one line per event:
 * `{"timestamp","run_id","seq","event","payload"}` per AgentEvent, written when the run ends.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AgentEvent } from '../../events/agent-event.js';
import { parseEventLines } from './event-store.js';
import { RUN_FILES } from './run-files.js';

/** The trace lines of an events.jsonl text (a torn last line, without its newline, is left out as the parser leaves it out). */
export function traceText(eventsText: string, runId: string): string {
  const out = parseEventLines(eventsText).map((ev) => parsedLine(runId, ev));
  return out.length ? `${out.join('\n')}\n` : '';
}

function parsedLine(runId: string, ev: AgentEvent): string {
  const d = ev.data as unknown as Record<string, unknown>;
  const name = ev.stream === 'run' ? String(d.type) : `${ev.stream}.${String(d.phase ?? 'update')}`;
  return JSON.stringify({ timestamp: new Date(ev.ts).toISOString(), run_id: runId, seq: ev.seq, event: name, payload: ev.data });
}

/**
 * A log larger than this is projected in chunks rather than read whole: runs that end together write
 * their traces together, and 100 streamed runs (a 250 KB log each: the assistant events carry the
 * text so far) held the logs, their texts and their traces at once — the server's peak memory.
 */
export const STREAM_TRACE_BYTES = 128 * 1024;
const CHUNK_BYTES = 64 * 1024;

/** Writes runtime/trace.jsonl from runtime/events.jsonl; no events file, no trace. */
export async function writeTrace(runRoot: string, runId: string): Promise<void> {
  const events = join(runRoot, RUN_FILES.events);
  let size: number;
  try {
    size = (await stat(events)).size;
  } catch {
    return;
  }
  if (size > STREAM_TRACE_BYTES) {
    await pipeline(
      createReadStream(events, { encoding: 'utf8', highWaterMark: CHUNK_BYTES }),
      (chunks: AsyncIterable<string>) => traceChunks(chunks, runId),
      createWriteStream(join(runRoot, RUN_FILES.trace)),
    );
    return;
  }
  let text = '';
  try {
    text = await readFile(events, 'utf8');
  } catch {
    return;
  }
  await writeFile(join(runRoot, RUN_FILES.trace), traceText(text, runId));
}

/** traceText of a log that arrives in pieces: each piece's whole lines as they come, a torn last line as traceText treats it. */
export async function* traceChunks(chunks: AsyncIterable<string>, runId: string): AsyncGenerator<string> {
  // the start of a line not ended yet; kept in pieces, so a line longer than many chunks is joined once
  let open: string[] = [];
  for await (const chunk of chunks) {
    const nl = chunk.lastIndexOf('\n');
    if (nl < 0) {
      open.push(chunk);
      continue;
    }
    const whole = open.length ? open.join('') + chunk.slice(0, nl + 1) : chunk.slice(0, nl + 1);
    open = nl + 1 < chunk.length ? [chunk.slice(nl + 1)] : [];
    const out = traceText(whole, runId);
    if (out) yield out;
  }
  if (open.length) {
    const out = traceText(open.join(''), runId);
    if (out) yield out;
  }
}
