/**
 * Real models, used well, against recorded streams on loopback with the requests
 * checked on the way in: reasoning sent and kept (Anthropic signed and redacted thinking back on
 * the next request; DeepSeek never), prompt-cache breakpoints and keys, cache and reasoning usage,
 * and a request refused before it is sent when it cannot fit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAiSdkProvider } from '../../src/providers/ai-sdk-provider.js';
import type { ChatMessage, ModelRequest, ModelStreamPart, ReasoningBlock } from '../../src/providers/model-provider.js';
import { collect, sse, startRecordedServer, type RecordedServer } from './recorded-server.js';

const KEY = 'sk-test-secret-key-0123456789';
const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';

const tools: ModelRequest['tools'] = [
  { name: 'list_artifacts', description: 'List the artifacts written so far', inputSchema: { type: 'object', properties: {}, additionalProperties: false } },
  {
    name: 'read_feedback_csv',
    description: 'Read the feedback CSV',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, max_rows: { type: 'integer' } }, required: ['path'], additionalProperties: false },
  },
];
const system = 'You are FeedbackLens.';
const goal: ChatMessage = { role: 'user', content: 'Find the top issues.' };

type Body = { messages: Array<{ role: string; content: unknown }>; [k: string]: unknown };
type Block = Record<string, unknown>;

function ofType<T extends ModelStreamPart['type']>(parts: ModelStreamPart[], type: T): Extract<ModelStreamPart, { type: T }>[] {
  return parts.filter((p): p is Extract<ModelStreamPart, { type: T }> => p.type === type);
}

/** The assistant message a loop keeps after a turn: text, tool calls and the provider's reasoning blocks. */
function assistantOf(parts: ModelStreamPart[]): Extract<ChatMessage, { role: 'assistant' }> {
  const toolCalls = ofType(parts, 'tool-call').map((c) => ({ id: c.id, name: c.name, args: c.args }));
  const reasoning: ReasoningBlock[] = ofType(parts, 'reasoning-block').map((b) => b.block);
  return {
    role: 'assistant',
    content: ofType(parts, 'text-delta')
      .map((p) => p.text)
      .join(''),
    toolCalls,
    reasoning,
  };
}

let server: RecordedServer;
beforeAll(async () => {
  server = await startRecordedServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

const body = (i: number): Body => server.requests[i]!.body as Body;

describe('anthropic: thinking with tool calls, round trip and prompt caching', () => {
  const anthropic = (model = 'claude-haiku-4-5') =>
    createAiSdkProvider({ provider: 'anthropic', model, baseURL: server.baseURL, env: { ANTHROPIC_API_KEY: KEY } });

  it('asks for thinking with the effort budget, keeps the signed block, and sends it back on the next request', async () => {
    server.reply(sse('anthropic-messages-tool-use.sse'), sse('anthropic-messages-cached-text.sse'));
    const p = anthropic();
    const first = await collect(p.stream({ system, messages: [goal], tools, reasoning: 'medium' }));
    expect(ofType(first, 'reasoning-block')).toEqual([
      { type: 'reasoning-block', block: { text: 'I need the rows before I can analyse anything.', providerMetadata: { anthropic: { signature: SIGNATURE } } } },
    ]);
    const req1 = body(0);
    expect(req1.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    // the reply's own limit (32,768: the default cap within the 200k window) plus the thinking budget
    expect(req1.max_tokens).toBe(32_768 + 8192);

    const assistant = assistantOf(first);
    const toolResult: ChatMessage = {
      role: 'tool',
      toolCallId: assistant.toolCalls![0]!.id,
      toolName: 'read_feedback_csv',
      content: '{"rows":3}',
      isError: false,
    };
    const second = await collect(p.stream({ system, messages: [goal, assistant, toolResult], tools, reasoning: 'medium' }));
    expect(
      ofType(second, 'text-delta')
        .map((t) => t.text)
        .join(''),
    ).toBe('Sync failures are the top issue (42 mentions).');

    const sentAssistant = body(1).messages[1]!;
    expect(sentAssistant.role).toBe('assistant');
    // thinking first, exactly as it came (text and signature), then the text and the tool call
    expect(sentAssistant.content).toEqual([
      { type: 'thinking', thinking: 'I need the rows before I can analyse anything.', signature: SIGNATURE },
      { type: 'text', text: 'Let me read the CSV.' },
      { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'read_feedback_csv', input: { path: 'input/feedback.csv', max_rows: 200 } },
    ]);
  });

  it('sends redacted thinking back as redacted_thinking with its data', async () => {
    server.reply(sse('anthropic-messages-redacted-thinking.sse'), sse('anthropic-messages-cached-text.sse'));
    const p = anthropic();
    const first = await collect(p.stream({ system, messages: [goal], tools, reasoning: 'high' }));
    const [block] = ofType(first, 'reasoning-block');
    expect(block!.block.text).toBe('');
    expect(block!.block.providerMetadata).toEqual({ anthropic: { redactedData: expect.stringMatching(/^EmwKAhgB/) } });
    const assistant = assistantOf(first);
    await collect(
      p.stream({
        system,
        messages: [
          goal,
          assistant,
          { role: 'tool', toolCallId: 'toolu_01Bq5Ww3Jm9Rk2Tx7Pz4LcVd', toolName: 'read_feedback_csv', content: 'rows', isError: false },
        ],
        tools,
        reasoning: 'high',
      }),
    );
    const content = body(1).messages[1]!.content as Block[];
    expect(content[0]).toEqual({ type: 'redacted_thinking', data: block!.block.providerMetadata!.anthropic!.redactedData });
    expect(content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_01Bq5Ww3Jm9Rk2Tx7Pz4LcVd' });
  });

  it('does not send back the thinking of a final answer (a turn without tool calls), nor unsigned reasoning', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    await collect(
      anthropic().stream({
        system,
        messages: [
          goal,
          { role: 'assistant', content: 'Sync failures.', reasoning: [{ text: 'thought', providerMetadata: { anthropic: { signature: SIGNATURE } } }] },
          { role: 'user', content: 'And the second issue?' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 't1', name: 'list_artifacts', args: {} }],
            reasoning: [{ text: 'from a <think> tag, no signature' }],
          },
          { role: 'tool', toolCallId: 't1', toolName: 'list_artifacts', content: '[]', isError: false },
        ],
        tools,
      }),
    );
    const sent = body(0).messages;
    expect(sent[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Sync failures.' }] });
    expect(sent[3]!.content).toEqual([{ type: 'tool_use', id: 't1', name: 'list_artifacts', input: {} }]);
  });

  it('sends no thinking setting when reasoning is off (the default)', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    await collect(anthropic().stream({ system, messages: [goal], tools }));
    expect(body(0)).not.toHaveProperty('thinking');
    expect(body(0).max_tokens).toBe(32_768);
  });

  it('marks cache breakpoints on the last tool, the system prompt and the newest message of the first request', async () => {
    server.reply(sse('anthropic-messages-tool-use.sse'));
    await collect(anthropic().stream({ system, messages: [goal], tools }));
    const sent = body(0);
    const sentTools = sent.tools as Block[];
    expect(sentTools.map((t) => t.cache_control ?? null)).toEqual([null, { type: 'ephemeral' }]);
    expect(sent.system).toEqual([{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Find the top issues.', cache_control: { type: 'ephemeral' } }] }]);
  });

  it('maps cache-read, cache-write and uncached input tokens from the usage (input is their sum)', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    const parts = await collect(anthropic().stream({ system, messages: [goal], tools }));
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      reason: 'stop',
      usage: { inputTokens: 46 + 212 + 4096, outputTokens: 58, cachedInputTokens: 4096, cacheWriteTokens: 212 },
    });
  });

  it('tells the run, without failing the call, that a model without reasoning was not asked to reason', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    const parts = await collect(anthropic('claude-3-5-haiku-20241022').stream({ system, messages: [goal], tools, reasoning: 'low' }));
    expect(ofType(parts, 'notice')).toEqual([
      { type: 'notice', text: 'anthropic:claude-3-5-haiku-20241022 does not support reasoning: reasoning "low" was not sent' },
    ]);
    expect(body(0)).not.toHaveProperty('thinking');
    expect(parts[parts.length - 1]).toMatchObject({ type: 'finish', reason: 'stop' });
  });
});

describe('a request that cannot fit is refused before it is sent', () => {
  it('refuses with context_length when limits.context_tokens is smaller than the request, and sends nothing', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    const p = createAiSdkProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', baseURL: server.baseURL, env: { ANTHROPIC_API_KEY: KEY } });
    const big: ChatMessage = { role: 'user', content: 'word '.repeat(4000) }; // ~5,000 tokens
    const parts = await collect(p.stream({ system, messages: [big], tools, contextTokens: 4096 }));
    expect(parts).toEqual([{ type: 'error', diagnosis: expect.objectContaining({ code: 'context_length', retryable: false }) }]);
    const d = (parts[0] as Extract<ModelStreamPart, { type: 'error' }>).diagnosis;
    expect(d.summary).toMatch(/does not fit anthropic:claude-haiku-4-5: about \d+ input tokens, limits\.context_tokens is 4096/);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a conversation larger than the model window from the catalog (200k for claude-haiku-4-5)', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    const p = createAiSdkProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', baseURL: server.baseURL, env: { ANTHROPIC_API_KEY: KEY } });
    const parts = await collect(p.stream({ system, messages: [{ role: 'user', content: 'x'.repeat(800_000) }], tools }));
    expect(parts[0]).toMatchObject({ type: 'error', diagnosis: { code: 'context_length' } });
    expect((parts[0] as Extract<ModelStreamPart, { type: 'error' }>).diagnosis.summary).toContain('its context window is 200000');
    expect(server.requests).toHaveLength(0);
  });

  it('sends a request that fits, with the reply limited to the room left in the window', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    const p = createAiSdkProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', baseURL: server.baseURL, env: { ANTHROPIC_API_KEY: KEY } });
    await collect(p.stream({ system, messages: [goal], tools, contextTokens: 6000 }));
    expect(server.requests).toHaveLength(1);
    const maxTokens = body(0).max_tokens as number;
    expect(maxTokens).toBeGreaterThanOrEqual(5000);
    expect(maxTokens).toBeLessThan(6000);
  });
});

describe('openai: reasoning effort, a stable prompt-cache key, cached and reasoning tokens', () => {
  const openai = (model: string) => createAiSdkProvider({ provider: 'openai', model, baseURL: server.baseURL, env: { OPENAI_API_KEY: KEY } });

  it('sends reasoning_effort and prompt_cache_key, and maps cached and reasoning tokens', async () => {
    server.reply(sse('openai-chat-cached-reasoning.sse'));
    const parts = await collect(openai('o4-mini').stream({ system, messages: [goal], tools, reasoning: 'high', cacheKey: 'runtrail-run_1' }));
    expect(body(0).reasoning_effort).toBe('high');
    expect(body(0).prompt_cache_key).toBe('runtrail-run_1');
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      reason: 'stop',
      usage: { inputTokens: 2306, outputTokens: 214, cachedInputTokens: 2048, reasoningTokens: 192 },
    });
  });

  it('keeps the same prompt_cache_key on every turn of a run', async () => {
    server.reply(sse('openai-chat-text.sse'));
    const p = openai('gpt-4o-mini');
    await collect(p.stream({ system, messages: [goal], tools, cacheKey: 'runtrail-run_2' }));
    await collect(
      p.stream({ system, messages: [goal, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }], tools, cacheKey: 'runtrail-run_2' }),
    );
    expect(server.requests.map((r) => (r.body as Body).prompt_cache_key)).toEqual(['runtrail-run_2', 'runtrail-run_2']);
  });

  it('does not send reasoning_effort to a model without reasoning (gpt-4o-mini) and says so', async () => {
    server.reply(sse('openai-chat-text.sse'));
    const parts = await collect(openai('gpt-4o-mini').stream({ system, messages: [goal], tools, reasoning: 'medium' }));
    expect(body(0)).not.toHaveProperty('reasoning_effort');
    expect(ofType(parts, 'notice')[0]!.text).toContain('gpt-4o-mini does not support reasoning');
    // the catalog's output limit for gpt-4o-mini (16,384) is sent
    expect(body(0).max_tokens).toBe(16_384);
  });
});

describe('deepseek: the reasoner model, never reasoning_content sent back', () => {
  const deepseek = (model: string) => createAiSdkProvider({ provider: 'deepseek', model, baseURL: server.baseURL, env: { DEEPSEEK_API_KEY: KEY } });

  it('a reasoner turn with a tool call, then the next request without reasoning_content; cache hits mapped', async () => {
    server.reply(sse('deepseek-reasoner-tool-call.sse'), sse('deepseek-reasoner.sse'));
    const p = deepseek('deepseek-reasoner');
    const first = await collect(p.stream({ system, messages: [goal], tools, reasoning: 'high' }));
    expect(
      ofType(first, 'reasoning-delta')
        .map((r) => r.text)
        .join(''),
    ).toBe('I should read the CSV first.');
    expect(first[first.length - 1]).toEqual({
      type: 'finish',
      reason: 'tool-calls',
      usage: { inputTokens: 1380, outputTokens: 41, cachedInputTokens: 1280, reasoningTokens: 12 },
    });
    // the reasoner always thinks: no extra switch is sent
    expect(body(0)).not.toHaveProperty('thinking');

    const assistant = assistantOf(first);
    expect(assistant.reasoning).toEqual([{ text: 'I should read the CSV first.' }]);
    await collect(
      p.stream({
        system,
        messages: [
          goal,
          assistant,
          { role: 'tool', toolCallId: assistant.toolCalls![0]!.id, toolName: 'read_feedback_csv', content: '{"rows":3}', isError: false },
        ],
        tools,
        reasoning: 'high',
      }),
    );
    const sent = body(1).messages as Array<Record<string, unknown>>;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(sent[2]).not.toHaveProperty('reasoning_content');
    expect(sent[2]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_00_Xk3Vd9PqR2sT7wYz1LmN4bC6', function: { name: 'read_feedback_csv' } }] });
    expect(JSON.stringify(body(1))).not.toContain('I should read the CSV first.');
  });

  it('deepseek-chat with reasoning on asks for thinking mode; off asks for nothing', async () => {
    server.reply(sse('deepseek-reasoner.sse'));
    const p = deepseek('deepseek-chat');
    await collect(p.stream({ system, messages: [goal], tools: [], reasoning: 'low' }));
    await collect(p.stream({ system, messages: [goal], tools: [] }));
    expect(body(0).thinking).toEqual({ type: 'enabled' });
    expect(body(1)).not.toHaveProperty('thinking');
  });
});

describe('images reach vision models as images and others as a withheld note', () => {
  // a 1×1 PNG
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const withImage: ChatMessage[] = [
    goal,
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_feedback_csv', args: { path: 'input/chart.png' } }] },
    {
      role: 'tool',
      toolCallId: 'c1',
      toolName: 'read_feedback_csv',
      content: 'chart.png (1×1)',
      isError: false,
      images: [{ mediaType: 'image/png', data: PNG, label: 'chart.png' }],
    },
  ];

  it('anthropic: the image is an image block inside the tool_result', async () => {
    server.reply(sse('anthropic-messages-cached-text.sse'));
    const p = createAiSdkProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', baseURL: server.baseURL, env: { ANTHROPIC_API_KEY: KEY } });
    await collect(p.stream({ system, messages: withImage, tools }));
    const result = (body(0).messages[2]!.content as Block[])[0]!;
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'c1', cache_control: { type: 'ephemeral' } });
    expect(result.content).toEqual([
      { type: 'text', text: 'chart.png (1×1)' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
  });

  it('openai (chat completions): text in the tool message, the image in a user message after the batch', async () => {
    server.reply(sse('openai-chat-text.sse'));
    const p = createAiSdkProvider({ provider: 'openai', model: 'gpt-4o-mini', baseURL: server.baseURL, env: { OPENAI_API_KEY: KEY } });
    await collect(p.stream({ system, messages: withImage, tools }));
    const sent = body(0).messages as Array<Record<string, unknown>>;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'chart.png (1×1)\n[1 image attached in the next message]' });
    expect(sent[4]!.content).toEqual([
      { type: 'text', text: 'Image returned by read_feedback_csv (c1):' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
  });

  it('deepseek-chat (no image input): a short text says the image was withheld, no image bytes are sent', async () => {
    server.reply(sse('deepseek-reasoner.sse'));
    const p = createAiSdkProvider({ provider: 'deepseek', model: 'deepseek-chat', baseURL: server.baseURL, env: { DEEPSEEK_API_KEY: KEY } });
    await collect(p.stream({ system, messages: withImage, tools }));
    const sent = body(0).messages as Array<Record<string, unknown>>;
    expect(sent[3]).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'chart.png (1×1)\n[image withheld: chart.png (image/png, 1 KB): deepseek:deepseek-chat does not take image input]',
    });
    expect(JSON.stringify(body(0))).not.toContain(PNG);
  });
});
