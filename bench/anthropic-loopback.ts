/**
 * A loopback stand-in for Anthropic's Messages API: replays scripted turns as Messages SSE (the
 * grammar of test/fixtures/recorded/anthropic-messages-*.sse), keeps every request it receives,
 * and reports usage the way the prompt cache would: a prefix (tools → system → messages) up to a
 * block marked `cache_control` is written to the cache; a later request whose prefix matches an
 * earlier breakpoint (looking back up to 20 blocks from each of its own breakpoints) reads it.
 * Used by bench/prompt-cache.bench.ts and the loop tests; not part of the package.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { estimateTokens } from '../src/providers/token-estimate.js';

export interface ScriptedTurn {
  thinking?: string;
  text?: string;
  toolUses?: Array<{ name: string; input: unknown }>;
}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface ReceivedMessagesRequest {
  body: Record<string, unknown>;
  /** Size of the request body on the wire. */
  bytes: number;
  usage: CacheUsage;
}

export interface AnthropicLoopback {
  baseURL: string;
  requests: ReceivedMessagesRequest[];
  close(): Promise<void>;
}

/** Anthropic's lookback: a breakpoint also finds a cached prefix up to 20 blocks before it. */
const LOOKBACK_BLOCKS = 20;

interface Block {
  json: string;
  breakpoint: boolean;
}

/** The request as the cache sees it: one block per tool, system text and content block, markers removed. */
function blocksOf(body: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  const push = (x: unknown, extra: Record<string, unknown> = {}) => {
    const { cache_control: cc, ...rest } = (x ?? {}) as Record<string, unknown>;
    out.push({ json: JSON.stringify({ ...extra, ...rest }), breakpoint: cc !== undefined });
  };
  for (const t of (body.tools as unknown[] | undefined) ?? []) push(t);
  const system = body.system;
  if (typeof system === 'string') push({ type: 'text', text: system });
  else for (const s of (system as unknown[] | undefined) ?? []) push(s);
  for (const m of (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    if (typeof m.content === 'string') push({ type: 'text', text: m.content }, { role: m.role });
    else for (const c of m.content as unknown[]) push(c, { role: m.role });
  }
  return out;
}

/** Prompt-cache accounting for one request against the prefixes earlier requests wrote. */
export class PromptCacheModel {
  private readonly written = new Set<string>();
  constructor(private readonly minCacheTokens: number) {}

  account(body: Record<string, unknown>, outputTokens: number): CacheUsage {
    const blocks = blocksOf(body);
    const hashes: string[] = [];
    const tokensUpTo: number[] = [];
    const h = createHash('sha256');
    let tokens = 0;
    for (const b of blocks) {
      h.update(b.json);
      h.update('\u0000');
      hashes.push(h.copy().digest('hex'));
      tokens += estimateTokens(b.json);
      tokensUpTo.push(tokens);
    }
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - LOOKBACK_BLOCKS); i--) {
        if (this.written.has(hashes[i]!)) {
          readEnd = Math.max(readEnd, i);
          break;
        }
      }
    }
    const read = readEnd >= 0 ? tokensUpTo[readEnd]! : 0;
    let writeEnd = readEnd;
    for (const bp of breakpoints) {
      if (bp > readEnd && tokensUpTo[bp]! >= this.minCacheTokens) {
        this.written.add(hashes[bp]!);
        writeEnd = Math.max(writeEnd, bp);
      }
    }
    const write = writeEnd > readEnd ? tokensUpTo[writeEnd]! - read : 0;
    return { input_tokens: tokens - read - write, cache_creation_input_tokens: write, cache_read_input_tokens: read, output_tokens: outputTokens };
  }
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** One scripted turn as a Messages SSE stream (thinking with a signature, text, tool_use blocks). */
export function anthropicSse(turn: ScriptedTurn, usage: CacheUsage, n: number): string {
  const { output_tokens, ...input } = usage;
  let out = event('message_start', {
    message: {
      id: `msg_loopback_${n}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-loopback',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...input, output_tokens: 1 },
    },
  });
  let index = 0;
  if (turn.thinking !== undefined) {
    out += event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    out += event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: turn.thinking } });
    out += event('content_block_delta', { index, delta: { type: 'signature_delta', signature: createHash('sha256').update(`sig${n}`).digest('base64') } });
    out += event('content_block_stop', { index });
    index++;
  }
  if (turn.text) {
    out += event('content_block_start', { index, content_block: { type: 'text', text: '' } });
    out += event('content_block_delta', { index, delta: { type: 'text_delta', text: turn.text } });
    out += event('content_block_stop', { index });
    index++;
  }
  for (const [k, use] of (turn.toolUses ?? []).entries()) {
    out += event('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_loopback_${n}_${k}`, name: use.name, input: {} } });
    out += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(use.input) } });
    out += event('content_block_stop', { index });
    index++;
  }
  out += event('message_delta', {
    delta: { stop_reason: turn.toolUses?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { ...input, output_tokens },
  });
  out += event('message_stop', {});
  return out;
}

/** Serves `turns` in order on 127.0.0.1 (POST …/messages); the last turn repeats. */
export async function startAnthropicLoopback(turns: ScriptedTurn[], opts: { minCacheTokens?: number } = {}): Promise<AnthropicLoopback> {
  const cache = new PromptCacheModel(opts.minCacheTokens ?? 1024);
  const requests: ReceivedMessagesRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      const n = requests.length;
      const turn = turns[Math.min(n, turns.length - 1)]!;
      const outputTokens = estimateTokens(`${turn.thinking ?? ''}${turn.text ?? ''}${JSON.stringify(turn.toolUses ?? [])}`);
      const usage = cache.account(body, outputTokens);
      requests.push({ body, bytes: raw.length, usage });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(anthropicSse(turn, usage, n));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
