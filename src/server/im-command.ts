/** Parses what a chat user typed: `/run <plugin> key=value… -- <goal>`, `/runs`, `/cancel [run_id]`, `/help`, or chat. */
export type ImCommand =
  | { kind: 'run'; plugin: string; input: Record<string, string>; goal: string }
  | { kind: 'runs' }
  | { kind: 'cancel'; runId?: string }
  | { kind: 'help' }
  | { kind: 'approve'; approvalId: string }
  | { kind: 'deny'; approvalId: string; reason: string }
  | { kind: 'chat'; text: string }
  | { kind: 'invalid'; message: string };

export const IM_HELP = [
  'Commands:',
  '/run <plugin> key=value … -- <goal>   start a run (quote values with spaces: key="a b")',
  '/runs                                 runs of this conversation',
  '/cancel [run_id]                      cancel the latest live run (or the one named)',
  '/approve <approval_id>                let a tool call that waits for you go ahead',
  '/deny <approval_id> <reason>          refuse it (the agent reads the reason)',
  '/help                                 this text',
  'Anything else is a chat message.',
].join('\n');

/** Splits on whitespace, keeping "double" or 'single' quoted parts together. */
export function splitArgs(s: string): string[] | string {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  let has = false;
  for (const ch of s) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (quote) return `unclosed ${quote} quote`;
  if (has || cur) out.push(cur);
  return out;
}

export function parseImCommand(text: string): ImCommand {
  const t = text.trim();
  if (!t.startsWith('/')) return { kind: 'chat', text: t };
  const m = /^\/(\w+)\b\s*([\s\S]*)$/.exec(t);
  const name = m?.[1]?.toLowerCase() ?? '';
  const rest = m?.[2] ?? '';
  switch (name) {
    case 'help':
      return { kind: 'help' };
    case 'runs':
      return { kind: 'runs' };
    case 'approve':
    case 'deny': {
      const [id, ...why] = rest.trim().split(/\s+/);
      if (!id) return { kind: 'invalid', message: `usage: /${name} <approval_id>${name === 'deny' ? ' <reason>' : ''}` };
      return name === 'approve' ? { kind: 'approve', approvalId: id } : { kind: 'deny', approvalId: id, reason: why.join(' ') };
    }
    case 'cancel': {
      const id = rest.trim();
      return id ? { kind: 'cancel', runId: id } : { kind: 'cancel' };
    }
    case 'run': {
      const sep = rest.search(/(^|\s)--(\s|$)/);
      const head = sep >= 0 ? rest.slice(0, sep) : rest;
      const goal =
        sep >= 0
          ? rest
              .slice(sep)
              .replace(/^\s*--/, '')
              .trim()
          : '';
      const args = splitArgs(head);
      if (typeof args === 'string') return { kind: 'invalid', message: `/run: ${args}` };
      const [plugin, ...pairs] = args;
      if (!plugin) return { kind: 'invalid', message: 'usage: /run <plugin> key=value … -- <goal>' };
      const input: Record<string, string> = {};
      for (const p of pairs) {
        const eq = p.indexOf('=');
        if (eq <= 0) return { kind: 'invalid', message: `/run: expected key=value, got ${JSON.stringify(p)}` };
        input[p.slice(0, eq)] = p.slice(eq + 1);
      }
      return { kind: 'run', plugin, input, goal };
    }
    default:
      return { kind: 'invalid', message: `unknown command /${name || '?'}; /help lists the commands` };
  }
}

/** key=value text → the JSON types the plugin's input schema asks for. */
export function coerceInput(input: Record<string, string>, types: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    const t = types[k];
    if ((t === 'integer' || t === 'number') && v.trim() !== '' && !Number.isNaN(Number(v))) out[k] = Number(v);
    else if (t === 'boolean' && (v === 'true' || v === 'false')) out[k] = v === 'true';
    else out[k] = v;
  }
  return out;
}
