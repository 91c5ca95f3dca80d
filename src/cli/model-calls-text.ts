/**
 * `runtrail show <run_id> --calls`: a run's model calls as a person reads them — one block per call
 * with its figures, what the request added since the call before it, and what came back. Long texts
 * are shortened here (the record and `--json` keep them whole).
 */
import type { CaptureState, ModelCall } from '../runtime/model-calls/model-call-record.js';

type SentMessage = ModelCall['request']['messages'][number];
type SentPart = SentMessage['parts'][number];
import { formatUsd } from './usage-lines.js';

const SHOWN_CHARS = 300;

function short(text: string, max = SHOWN_CHARS): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}… (${one.length} characters)` : one;
}

const json = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));

function ms(n: number): string {
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`;
}

function partLine(p: SentPart): string {
  switch (p.type) {
    case 'text':
      return short(p.content);
    case 'reasoning':
      return `(thinking${p.redacted ? ', redacted' : ''}) ${short(p.content)}`;
    case 'tool_call':
      return `→ ${p.name} ${short(json(p.arguments), 200)} [${p.id}]`;
    case 'tool_call_response':
      return `${p.is_error ? '✗' : '←'} ${p.name} [${p.id}]: ${short(json(p.response))}`;
    case 'file':
      return `[${p.modality} ${p.mime_type}, ${p.bytes} bytes: ${p.file_id}]`;
    case 'uri':
      return `[${p.modality} ${p.uri}]`;
    case 'blob':
      return `[${p.modality} ${p.mime_type}, inline]`;
  }
}

function messageLines(m: SentMessage, mark: string): string[] {
  const [first, ...rest] = m.parts.map(partLine);
  return [`   ${mark} ${m.role}: ${first ?? ''}`, ...rest.map((l) => `       ${l}`)];
}

function headOf(c: ModelCall): string {
  const what = c.kind === 'turn' ? `turn ${c.turn}${c.attempt ? ` (retry ${c.attempt})` : ''}` : c.kind === 'compaction' ? 'compaction summary' : 'call';
  const bits = [`call ${c.call}`, what, `${c.provider}:${c.model}`, ms(c.latency_ms)];
  if (c.first_token_ms !== null) bits[bits.length - 1] += ` (first token ${ms(c.first_token_ms)})`;
  bits.push(
    c.usage
      ? `${c.usage.input.toLocaleString('en-US')} in${c.usage.cached_input ? ` (${c.usage.cached_input.toLocaleString('en-US')} cached)` : ''} / ${c.usage.output.toLocaleString('en-US')} out`
      : 'no usage reported',
  );
  if (c.cost_usd !== null) bits.push(formatUsd(c.cost_usd));
  bits.push(c.response.finish_reason);
  return `── ${bits.join(' · ')}`;
}

/** One call: its figures, the request (what is new since the call it shares messages with), the response. */
export function modelCallText(c: ModelCall): string {
  const req = c.request;
  const kept = req.shared_with?.messages ?? 0;
  const s = req.settings;
  const settings = [
    s.max_output_tokens !== null ? `max output ${s.max_output_tokens}` : '',
    s.temperature !== null ? `temperature ${s.temperature}` : '',
    `reasoning ${s.reasoning}`,
    s.cache_breakpoints.length ? `cache at ${s.cache_breakpoints.join(', ')}` : '',
  ].filter(Boolean);
  const lines = [headOf(c)];
  const tools = req.tools ? `${req.tools.count} tools (${req.tools.set})` : 'no tools';
  lines.push(
    `   request: ${req.message_count} message(s)${req.shared_with ? `, the first ${kept} as in call ${req.shared_with.call}` : ''} · ${tools} · ${settings.join(' · ')}`,
  );
  if (!req.shared_with) lines.push(`   system: ${short(req.system, 160)}`);
  for (const m of req.messages.slice(kept)) lines.push(...messageLines(m, '+'));
  const r = c.response;
  if (r.error) lines.push(`   failed: ${r.error.code}: ${r.error.summary}`);
  if (r.reasoning) lines.push(`   thinking: ${short(r.reasoning)}`);
  if (r.text) lines.push(`   answer: ${short(r.text)}`);
  for (const t of r.tool_calls) lines.push(`   → ${t.name} ${short(json(t.arguments), 200)}${t.id ? ` [${t.id}]` : ''}`);
  if (c.cut)
    lines.push(`   cut to ${c.cut.limit_bytes} bytes: ${c.cut.fields.map((f) => `${f.path} (${f.kept_chars} of ${f.original_chars} characters)`).join(', ')}`);
  return lines.join('\n');
}

/** What to say when a run has no calls to show. */
export function noCallsText(capture: CaptureState): string {
  return capture === 'off'
    ? 'model calls were not recorded for this run: capture.model_io was false (config.json or the agent)'
    : 'no model calls recorded for this run (it made none yet, or it ran before calls were recorded)';
}
