/**
 * Token counts estimated without a tokenizer: what the context check (and later compaction)
 * weighs a request with before it is sent. Rough on purpose and on the high side for scripts
 * where a token holds fewer characters than in English.
 */
import type { ChatMessage, ToolSpec } from './model-provider.js';

/** What one image costs at most: Anthropic bills (w×h)/750 and scales images down to ~1.15 MP, ~1,600 tokens. */
export const IMAGE_TOKENS = 1_600;
/** Role markers and separators around each message. */
const MESSAGE_OVERHEAD = 4;

/** CJK ideographs, kana, Hangul and full-width forms: about one token a character. */
function isWide(c: number): boolean {
  return (c >= 0x2e80 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef);
}

/** ~4 ASCII characters a token, one token per CJK character, two per other non-ASCII character. */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let wide = 0;
  let other = 0;
  // UTF-16 code units: a character outside the BMP counts as two "other" halves, one token
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) ascii++;
    else if (isWide(c)) wide++;
    else other++;
  }
  return Math.ceil(ascii / 4 + wide + other / 2);
}

/**
 * A message's count, kept while the message is unchanged: every turn weighs the whole conversation
 * (the context check, compaction, usage), so without it a long run counts its history again and again.
 */
interface Counted {
  content: string;
  parts: unknown;
  length: number;
  reasoning: unknown;
  n: number;
}
const counted = new WeakMap<ChatMessage, Counted>();

function partsOf(m: ChatMessage): readonly unknown[] | undefined {
  return m.role === 'assistant' ? m.toolCalls : m.images;
}

export function estimateMessageTokens(m: ChatMessage): number {
  const parts = partsOf(m);
  const reasoning = m.role === 'assistant' ? m.reasoning : undefined;
  const c = counted.get(m);
  if (c && c.content === m.content && c.parts === parts && c.length === (parts?.length ?? 0) && c.reasoning === reasoning) return c.n;
  let n = MESSAGE_OVERHEAD + estimateTokens(m.content);
  if (m.role === 'assistant') {
    if (m.toolCalls?.length) n += estimateTokens(JSON.stringify(m.toolCalls));
    for (const r of m.reasoning ?? []) n += estimateTokens(r.text);
  } else {
    n += (m.images?.length ?? 0) * IMAGE_TOKENS;
  }
  counted.set(m, { content: m.content, parts, length: parts?.length ?? 0, reasoning, n });
  return n;
}

const toolCounts = new WeakMap<ToolSpec, { name: string; description: string; inputSchema: unknown; n: number }>();

function estimateToolTokens(t: ToolSpec): number {
  const c = toolCounts.get(t);
  if (c && c.name === t.name && c.description === t.description && c.inputSchema === t.inputSchema) return c.n;
  const n = estimateTokens(t.name) + estimateTokens(t.description) + estimateTokens(JSON.stringify(t.inputSchema));
  toolCounts.set(t, { name: t.name, description: t.description, inputSchema: t.inputSchema, n });
  return n;
}

/**
 * A conversation's counts, message by message, kept with the messages they are of. A run's loop
 * pushes to one array and every turn weighs all of it: asking each message's own count again
 * reads every message object, and with a thousand of them cold in memory between turns (a turn
 * of 100 tool calls runs in between) that was ~0.5 µs a message. Comparing the array's entries
 * with the ones counted reads only the two arrays. A message replaced or spliced out (compaction)
 * is counted again from there; messages are not changed in place once in a conversation (the
 * loop and compaction make new ones), and `estimateMessageTokens` still checks that for one.
 */
interface ConversationCounts {
  refs: ChatMessage[];
  counts: number[];
}
const conversations = new WeakMap<readonly ChatMessage[], ConversationCounts>();

function estimateConversationTokens(messages: readonly ChatMessage[]): number {
  let c = conversations.get(messages);
  if (!c) {
    c = { refs: [], counts: [] };
    conversations.set(messages, c);
  }
  const { refs, counts } = c;
  let n = 0;
  let i = 0;
  for (const end = Math.min(refs.length, messages.length); i < end && refs[i] === messages[i]; i++) n += counts[i];
  refs.length = i;
  counts.length = i;
  for (; i < messages.length; i++) {
    const m = messages[i];
    const t = estimateMessageTokens(m);
    refs.push(m);
    counts.push(t);
    n += t;
  }
  return n;
}

/** The whole request: system prompt, tool definitions and every message. */
export function estimateRequestTokens(request: { system: string; messages: readonly ChatMessage[]; tools: readonly ToolSpec[] }): number {
  let n = estimateTokens(request.system);
  for (const t of request.tools) n += estimateToolTokens(t);
  return n + estimateConversationTokens(request.messages);
}
