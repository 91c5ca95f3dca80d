/**
 * runtime/trace.jsonl, the legacy flat projection of events.jsonl: one
 * `{"timestamp","run_id","seq","event","payload"}` line per AgentEvent, written when the run ends.
 *
 * Most lines are projected without parsing them: an events.jsonl line starts with the fixed prefix
 * `{"runId":…,"seq":N,"ts":N,"stream":"…","data":` and its data's first key names the event (a
 * run event's `type`, another stream's `phase`), so the payload is the line's data text as written
 * (JSON.stringify of the parsed data would give the same text back). A 100-run burst spent 7% of
 * the server's time re-parsing and re-quoting the assistant stream's cumulative text here. Any other
 * line (nested first key, no phase first) is parsed as before.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentEvent } from '../events/agent-event.js';
import { parseEventLines } from './event-store.js';

export const TRACE_FILE = 'runtime/trace.jsonl';

const PREFIX_RE = /^\{"runId":"[^"\\]*","seq":(\d+),"ts":(\d+),"stream":"([a-z_]+)","data":\{"(type|phase)":"([^"\\]*)"/;
const DATA_KEY = ',"data":';

/** The quoted ISO time of an event's ts; consecutive events mostly share their millisecond. */
class IsoTimes {
  private ts = Number.NaN;
  private text = '';
  of(ts: number): string {
    if (ts !== this.ts) {
      this.ts = ts;
      this.text = JSON.stringify(new Date(ts).toISOString());
    }
    return this.text;
  }
}

/** The trace lines of an events.jsonl text (a torn last line, without its newline, is left out as the parser leaves it out). */
export function traceText(eventsText: string, runId: string): string {
  const out: string[] = [];
  const runJson = JSON.stringify(runId);
  const times = new IsoTimes();
  let at = 0;
  while (at < eventsText.length) {
    const nl = eventsText.indexOf('\n', at);
    if (nl < 0) {
      // the last line has no newline: only a parser can tell a whole line from a torn one
      for (const ev of parseEventLines(eventsText.slice(at))) out.push(parsedLine(runId, ev));
      break;
    }
    const line = eventsText.slice(at, nl);
    at = nl + 1;
    const m = PREFIX_RE.exec(line);
    const seq = m ? Number(m[1]) : 0;
    if (m && seq > 0 && line.endsWith('}') && (m[3] === 'run') === (m[4] === 'type')) {
      const event = m[3] === 'run' ? m[5] : `${m[3]}.${m[5]}`;
      const payload = line.slice(line.indexOf(DATA_KEY) + DATA_KEY.length, -1);
      out.push(`{"timestamp":${times.of(Number(m[2]))},"run_id":${runJson},"seq":${seq},"event":${JSON.stringify(event)},"payload":${payload}}`);
    } else for (const ev of parseEventLines(line)) out.push(parsedLine(runId, ev));
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

function parsedLine(runId: string, ev: AgentEvent): string {
  const d = ev.data as unknown as Record<string, unknown>;
  const name = ev.stream === 'run' ? String(d.type) : `${ev.stream}.${String(d.phase ?? 'update')}`;
  return JSON.stringify({ timestamp: new Date(ev.ts).toISOString(), run_id: runId, seq: ev.seq, event: name, payload: ev.data });
}

/** Writes runtime/trace.jsonl from runtime/events.jsonl; no events file, no trace. */
export async function writeTrace(runRoot: string, runId: string): Promise<void> {
  let text = '';
  try {
    text = await readFile(join(runRoot, 'runtime', 'events.jsonl'), 'utf8');
  } catch {
    return;
  }
  await writeFile(join(runRoot, TRACE_FILE), traceText(text, runId));
}
