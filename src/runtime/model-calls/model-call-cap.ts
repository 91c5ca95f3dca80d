/**
 * Keeps one model-call record within its limit (capture.max_call_bytes, default 1 MB): the longest
 * texts of the line (tool results, the system prompt, the answer) are shortened to a common length
 * until it fits, each cut marked in the text and listed in the record's `cut`, so a reader knows what
 * is missing and where.
 */
import type { SentPart } from '../../providers/model-provider.js';
import type { ModelCallCut, ModelCallLine } from './model-call-record.js';

export const DEFAULT_MAX_CALL_BYTES = 1024 * 1024;
/** What a cut record may not go below: room for its figures, ids and the list of cuts. */
export const MIN_MAX_CALL_BYTES = 16 * 1024;

interface Leaf {
  path: string;
  message?: number;
  text: string;
  set(v: string): void;
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));

function leavesOf(line: ModelCallLine): Leaf[] {
  const out: Leaf[] = [];
  const req = line.request;
  if (req.system) out.push({ path: 'request.system', text: req.system, set: (v) => (req.system = v) });
  const first = req.message_count - req.messages.length;
  req.messages.forEach((m, i) => {
    const n = first + i;
    m.parts.forEach((p: SentPart, j) => {
      const at = `request.messages[${n}].parts[${j}]`;
      if (p.type === 'text' || p.type === 'reasoning') out.push({ path: `${at}.content`, message: n, text: p.content, set: (v) => (p.content = v) });
      else if (p.type === 'tool_call') out.push({ path: `${at}.arguments`, message: n, text: asText(p.arguments), set: (v) => (p.arguments = v) });
      else if (p.type === 'tool_call_response') out.push({ path: `${at}.response`, message: n, text: asText(p.response), set: (v) => (p.response = v) });
    });
  });
  const res = line.response;
  out.push(
    { path: 'response.text', text: res.text, set: (v) => (res.text = v) },
    { path: 'response.reasoning', text: res.reasoning, set: (v) => (res.reasoning = v) },
  );
  res.tool_calls.forEach((c, i) => out.push({ path: `response.tool_calls[${i}].arguments`, text: asText(c.arguments), set: (v) => (c.arguments = v) }));
  return out;
}

/** The common length the longest texts are cut to so that they lose at least `excess` characters. */
function cutLength(lengths: number[], excess: number): number {
  const sorted = [...lengths].sort((a, b) => b - a);
  let removed = 0;
  for (let i = 0; i < sorted.length; i++) {
    const next = sorted[i + 1] ?? 0;
    // cutting the first i+1 texts down to `next` removes this much more
    const gain = (sorted[i] - next) * (i + 1);
    if (removed + gain >= excess) return Math.max(0, Math.floor(sorted[i] - (excess - removed) / (i + 1)));
    removed += gain;
  }
  return 0;
}

const byteLength = (line: ModelCallLine): number => Buffer.byteLength(JSON.stringify(line));

/** The line as it fits `limit` bytes: itself when it does, else a shortened copy with its `cut`. */
export function capModelCallLine(whole: ModelCallLine, limit: number): ModelCallLine {
  const before = byteLength(whole);
  if (before <= limit) return whole;
  // a copy: the recorder still compares the next call's messages with the whole ones
  const line = structuredClone(whole);
  const original = new Map<string, number>();
  const fields = new Map<string, ModelCallCut['fields'][number]>();
  // characters of CJK text are 3 bytes: a few rounds reach the limit whatever the script
  for (let round = 0, size = before; round < 6 && size > limit; round++) {
    const leaves = leavesOf(line).filter((l) => l.text.length > 0);
    const budget = Math.max(0, limit - 2_048 - 160 * leaves.length);
    const excess = Math.ceil((size - budget) * (round === 0 ? 1 : 1.5));
    const keep = cutLength(
      leaves.map((l) => l.text.length),
      excess,
    );
    for (const leaf of leaves) {
      if (leaf.text.length <= keep) continue;
      const was = original.get(leaf.path) ?? leaf.text.length;
      original.set(leaf.path, was);
      const kept = leaf.text.replace(/…\[cut: kept \d+ of \d+ characters\]$/, '').slice(0, keep);
      leaf.set(`${kept}…[cut: kept ${kept.length} of ${was} characters]`);
      fields.set(leaf.path, {
        path: leaf.path,
        ...(leaf.message !== undefined ? { message: leaf.message } : {}),
        kept_chars: kept.length,
        original_chars: was,
      });
    }
    size = byteLength(line);
  }
  // still over (thousands of tiny messages): what is left of each message's parts goes
  if (byteLength(line) > limit) {
    const first = line.request.message_count - line.request.messages.length;
    line.request.messages.forEach((m, i) => {
      m.parts = [{ type: 'text', content: '[cut]' }];
      fields.set(`request.messages[${first + i}].parts`, {
        path: `request.messages[${first + i}].parts`,
        message: first + i,
        kept_chars: 0,
        original_chars: 0,
      });
    });
  }
  line.cut = { limit_bytes: limit, bytes_before: before, fields: [...fields.values()] };
  return line;
}
