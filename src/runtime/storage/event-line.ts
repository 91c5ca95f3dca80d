/**
 * An AgentEvent as its events.jsonl line: exactly `JSON.stringify(event)`, built by hand when the
 * event's data is flat (strings, numbers, booleans, null — a delta, a state change, a notice), which
 * is most events and about twice as fast on Node 20; nested data goes through JSON.stringify.
 */
import type { AgentEvent } from '../../events/agent-event.js';
import { isFlatRecord } from '../../tools/flat-record.js';

const keyText = new Map<string, string>();

function quotedKey(k: string): string {
  let q = keyText.get(k);
  if (q === undefined) {
    q = `${JSON.stringify(k)}:`;
    if (keyText.size < 1_000) keyText.set(k, q); // data keys are a small fixed set; never grows unbounded
  }
  return q;
}

/** A flat data object as JSON (every value a primitive; `isFlatRecord` is asked first, so a tool
 *  result's long text is never quoted here and then again by JSON.stringify). */
function flatJson(data: Record<string, unknown>): string | null {
  let out = '{';
  let first = true;
  for (const k of Object.keys(data)) {
    const v = data[k];
    let text: string;
    switch (typeof v) {
      case 'string':
        text = JSON.stringify(v);
        break;
      case 'number':
        text = Number.isFinite(v) ? String(v) : 'null';
        break;
      case 'boolean':
        text = v ? 'true' : 'false';
        break;
      case 'undefined':
      case 'function':
      case 'symbol':
        continue; // JSON.stringify leaves these keys out
      default:
        if (v !== null) return null;
        text = 'null';
    }
    out += first ? quotedKey(k) + text : `,${quotedKey(k)}${text}`;
    first = false;
  }
  return `${out}}`;
}

export function eventLine(event: AgentEvent): string {
  const data = event.data as unknown as Record<string, unknown>;
  const flat = isFlatRecord(data) ? flatJson(data) : null;
  if (flat === null) return JSON.stringify(event);
  return `{"runId":${JSON.stringify(event.runId)},"seq":${event.seq},"ts":${event.ts},"stream":${JSON.stringify(event.stream)},"data":${flat}}`;
}
