import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAiSdkProvider } from '../../src/providers/ai-sdk-provider.js';
import type { ModelRequest, ModelStreamPart } from '../../src/providers/model-provider.js';
import { closedPort, collect, jsonError, sse, startRecordedServer, type RecordedServer } from './recorded-server.js';

const KEY = 'sk-test-secret-key-0123456789';

const request: ModelRequest = {
  system: 'You are FeedbackLens.',
  messages: [
    { role: 'user', content: 'Find the top issues.' },
    { role: 'assistant', content: 'Reading.', toolCalls: [{ id: 'call_1', name: 'read_feedback_csv', args: { path: 'input/a.csv' } }] },
    { role: 'tool', toolCallId: 'call_1', toolName: 'read_feedback_csv', content: '{"rows":3}', isError: false },
  ],
  tools: [
    {
      name: 'read_feedback_csv',
      description: 'Read the feedback CSV',
      inputSchema: { type: 'object', properties: { path: { type: 'string' }, max_rows: { type: 'integer' } }, required: ['path'], additionalProperties: false },
    },
  ],
};

function ofType<T extends ModelStreamPart['type']>(parts: ModelStreamPart[], type: T): Extract<ModelStreamPart, { type: T }>[] {
  return parts.filter((p): p is Extract<ModelStreamPart, { type: T }> => p.type === type);
}

function errorOf(parts: ModelStreamPart[]) {
  const errs = ofType(parts, 'error');
  expect(errs).toHaveLength(1);
  expect(parts[parts.length - 1]).toBe(errs[0]);
  return errs[0]!.diagnosis;
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

describe('openai (chat completions) against recorded streams', () => {
  const openai = () => createAiSdkProvider({ provider: 'openai', model: 'gpt-4o-mini', baseURL: server.baseURL, env: { OPENAI_API_KEY: KEY } });

  it('streams text deltas, one tool call with parsed args, and usage', async () => {
    server.reply(sse('openai-chat-tool-call.sse'));
    const parts = await collect(openai().stream(request));
    expect(
      ofType(parts, 'text-delta')
        .map((p) => p.text)
        .join(''),
    ).toBe("I'll read the feedback file first.");
    expect(ofType(parts, 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_Qm2Xb7RkP0aLs9TzVw3Nc1Ue', name: 'read_feedback_csv', args: { path: 'input/feedback.csv', max_rows: 200 } },
    ]);
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      reason: 'tool-calls',
      usage: { inputTokens: 412, outputTokens: 31, cachedInputTokens: 0, reasoningTokens: 0 },
    });
  });

  it('sends the system prompt, mapped messages, tools as functions, streaming, and the key only as a header', async () => {
    server.reply(sse('openai-chat-text.sse'));
    const parts = await collect(openai().stream(request));
    expect(
      ofType(parts, 'text-delta')
        .map((p) => p.text)
        .join(''),
    ).toBe('The top issue is sync failures (42 mentions).');
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify(sent.body)).not.toContain(KEY);
    expect(sent.body.model).toBe('gpt-4o-mini');
    expect(sent.body.stream).toBe(true);
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are FeedbackLens.' },
      { role: 'user', content: 'Find the top issues.' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_feedback_csv', arguments: '{"path":"input/a.csv"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"rows":3}' },
    ]);
    expect(sent.body.tools).toEqual([
      { type: 'function', function: { name: 'read_feedback_csv', description: 'Read the feedback CSV', parameters: request.tools[0]!.inputSchema } },
    ]);
  });

  it('maps 401 to auth naming OPENAI_API_KEY, without leaking the key', async () => {
    server.reply(jsonError(401, 'openai-401.json'));
    const d = errorOf(await collect(openai().stream(request)));
    expect(d).toMatchObject({ code: 'auth', severity: 'error', retryable: false });
    expect(d.hint).toContain('OPENAI_API_KEY');
    const text = JSON.stringify(d);
    expect(text).not.toContain(KEY);
    expect(text).not.toMatch(/sk-test/);
  });

  it('maps 429 to rate_limit (retryable) with the retry-after', async () => {
    server.reply(jsonError(429, 'openai-429.json', { 'retry-after': '2' }));
    const d = errorOf(await collect(openai().stream(request)));
    expect(d).toMatchObject({ code: 'rate_limit', retryable: true });
    expect(d.summary).toContain('retry-after: 2');
    expect(server.requests).toHaveLength(1); // the SDK's own retries are off: the loop owns recovery
  });

  it('maps 503 to overload (retryable)', async () => {
    server.reply(jsonError(503, 'openai-503.json'));
    expect(errorOf(await collect(openai().stream(request)))).toMatchObject({ code: 'overload', retryable: true });
  });

  it('maps a 400 context-length error to context_length (not retryable)', async () => {
    server.reply(jsonError(400, 'openai-400-context-length.json'));
    const d = errorOf(await collect(openai().stream(request)));
    expect(d).toMatchObject({ code: 'context_length', retryable: false });
    expect(d.detail).toContain('maximum context length');
  });

  it('maps another 400 to bad_request with the provider message', async () => {
    server.reply(jsonError(400, 'openai-400-bad-request.json'));
    const d = errorOf(await collect(openai().stream(request)));
    expect(d).toMatchObject({ code: 'bad_request', retryable: false });
    expect(d.detail).toContain("Invalid schema for function 'read_feedback_csv'");
  });

  it('maps connection refused to network (retryable)', async () => {
    const port = await closedPort();
    const p = createAiSdkProvider({ provider: 'openai', model: 'gpt-4o-mini', baseURL: `http://127.0.0.1:${port}/v1`, env: { OPENAI_API_KEY: KEY } });
    const d = errorOf(await collect(p.stream(request)));
    expect(d).toMatchObject({ code: 'network', retryable: true });
    expect(d.summary).toContain('ECONNREFUSED');
  });

  it('maps a connection dropped in the middle of a stream to network (retryable), after the text so far', async () => {
    server.reply({ ...sse('openai-chat-text.sse'), dropAfterBytes: 900 });
    const parts = await collect(openai().stream(request));
    expect(ofType(parts, 'text-delta').length).toBeGreaterThan(0);
    expect(errorOf(parts)).toMatchObject({ code: 'network', retryable: true });
  });

  it('respects an AbortSignal: an aborted call yields an aborted error and sends nothing', async () => {
    server.reply(sse('openai-chat-text.sse'));
    const ac = new AbortController();
    ac.abort();
    const d = errorOf(await collect(openai().stream({ ...request, signal: ac.signal })));
    expect(d).toMatchObject({ code: 'aborted', retryable: false });
    expect(server.requests).toHaveLength(0);
  });
});

describe('anthropic (messages) against recorded streams', () => {
  const anthropic = () => createAiSdkProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', baseURL: server.baseURL, env: { ANTHROPIC_API_KEY: KEY } });

  it('streams thinking as reasoning, text, a tool_use call and usage', async () => {
    server.reply(sse('anthropic-messages-tool-use.sse'));
    const parts = await collect(anthropic().stream(request));
    expect(
      ofType(parts, 'reasoning-delta')
        .map((p) => p.text)
        .join(''),
    ).toBe('I need the rows before I can analyse anything.');
    expect(
      ofType(parts, 'text-delta')
        .map((p) => p.text)
        .join(''),
    ).toBe('Let me read the CSV.');
    expect(ofType(parts, 'tool-call')).toEqual([
      { type: 'tool-call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'read_feedback_csv', args: { path: 'input/feedback.csv', max_rows: 200 } },
    ]);
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      reason: 'tool-calls',
      usage: { inputTokens: 623, outputTokens: 87, cachedInputTokens: 0, cacheWriteTokens: 0 },
    });
    // reasoning arrives before the text, as it streamed
    expect(parts.findIndex((p) => p.type === 'reasoning-delta')).toBeLessThan(parts.findIndex((p) => p.type === 'text-delta'));
  });

  it('sends system, tool_use/tool_result blocks and tools with input_schema; key in x-api-key', async () => {
    server.reply(sse('anthropic-messages-tool-use.sse'));
    await collect(anthropic().stream(request));
    const sent = server.requests[0]!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.body.model).toBe('claude-haiku-4-5');
    expect(sent.body.system).toEqual([{ type: 'text', text: 'You are FeedbackLens.', cache_control: { type: 'ephemeral' } }]);
    const messages = sent.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]!.content).toEqual([
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'call_1', name: 'read_feedback_csv', input: { path: 'input/a.csv' } },
    ]);
    expect(messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1', content: '{"rows":3}', cache_control: { type: 'ephemeral' } });
    expect(sent.body.tools).toEqual([
      expect.objectContaining({
        name: 'read_feedback_csv',
        description: 'Read the feedback CSV',
        input_schema: request.tools[0]!.inputSchema,
        cache_control: { type: 'ephemeral' },
      }),
    ]);
  });

  it('hands SDK warnings to onWarning instead of printing them (stdout may carry NDJSON)', async () => {
    server.reply(sse('anthropic-messages-tool-use.sse'));
    const warnings: string[] = [];
    const p = createAiSdkProvider({
      provider: 'anthropic',
      model: 'claude-unknown-test-model',
      baseURL: server.baseURL,
      env: { ANTHROPIC_API_KEY: KEY },
      onWarning: (w) => warnings.push(w),
    });
    await collect(p.stream(request));
    expect(warnings.join('\n')).toContain('maxOutputTokens');
    expect((globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS).toBe(false);
  });

  it('maps 401 authentication_error to auth naming ANTHROPIC_API_KEY', async () => {
    server.reply(jsonError(401, 'anthropic-401.json'));
    const d = errorOf(await collect(anthropic().stream(request)));
    expect(d).toMatchObject({ code: 'auth', retryable: false });
    expect(d.hint).toContain('ANTHROPIC_API_KEY');
    expect(JSON.stringify(d)).not.toContain(KEY);
  });

  it('maps 529 overloaded_error to overload (retryable)', async () => {
    server.reply(jsonError(529, 'anthropic-529.json'));
    expect(errorOf(await collect(anthropic().stream(request)))).toMatchObject({ code: 'overload', retryable: true });
  });

  it('maps an overloaded error event in the middle of a stream to overload', async () => {
    server.reply(sse('anthropic-messages-overloaded-midstream.sse'));
    expect(errorOf(await collect(anthropic().stream(request)))).toMatchObject({ code: 'overload', retryable: true });
  });

  it('maps "prompt is too long" to context_length', async () => {
    server.reply(jsonError(400, 'anthropic-400-prompt-too-long.json'));
    expect(errorOf(await collect(anthropic().stream(request)))).toMatchObject({ code: 'context_length', retryable: false });
  });
});

describe('deepseek against recorded streams', () => {
  const deepseek = () => createAiSdkProvider({ provider: 'deepseek', model: 'deepseek-reasoner', baseURL: server.baseURL, env: { DEEPSEEK_API_KEY: KEY } });

  it('streams reasoning_content as reasoning, then the answer and usage', async () => {
    server.reply(sse('deepseek-reasoner.sse'));
    const parts = await collect(deepseek().stream({ system: 'Be brief.', messages: [{ role: 'user', content: 'Top issue?' }], tools: [] }));
    expect(
      ofType(parts, 'reasoning-delta')
        .map((p) => p.text)
        .join(''),
    ).toBe('The user asks for the top issue. Sync failures dominate.');
    expect(
      ofType(parts, 'text-delta')
        .map((p) => p.text)
        .join(''),
    ).toBe('Sync failures are the top issue.');
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      reason: 'stop',
      usage: { inputTokens: 57, outputTokens: 64, cachedInputTokens: 0, reasoningTokens: 48 },
    });
    const sent = server.requests[0]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.body.tools).toBeUndefined();
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Top issue?' },
    ]);
  });

  it('maps 402 insufficient balance to a non-retryable bad_request', async () => {
    server.reply(jsonError(402, 'deepseek-402.json'));
    expect(errorOf(await collect(deepseek().stream(request)))).toMatchObject({ code: 'bad_request', retryable: false });
  });
});

describe('openai-compatible (Ollama, vLLM, llama.cpp) against recorded streams', () => {
  it('talks OpenAI chat completions to the base URL, without an Authorization header when no key is set', async () => {
    server.reply(sse('openai-chat-tool-call.sse'));
    const p = createAiSdkProvider({ provider: 'openai-compatible', model: 'llama3.1:8b', env: { OPENAI_COMPATIBLE_BASE_URL: server.baseURL } });
    const parts = await collect(p.stream(request));
    expect(ofType(parts, 'tool-call')[0]).toMatchObject({ name: 'read_feedback_csv', args: { path: 'input/feedback.csv', max_rows: 200 } });
    expect(parts[parts.length - 1]).toMatchObject({ type: 'finish', usage: { inputTokens: 412, outputTokens: 31 } });
    const sent = server.requests[0]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.model).toBe('llama3.1:8b');
    expect(sent.body.stream_options).toEqual({ include_usage: true });
  });
});
