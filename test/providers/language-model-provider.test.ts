import { describe, expect, it } from 'vitest';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { APICallError } from 'ai';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { LanguageModelProvider } from '../../src/providers/ai-sdk-provider.js';
import { toModelMessages } from '../../src/providers/message-mapping.js';
import type { ModelRequest } from '../../src/providers/model-provider.js';
import { collect } from './recorded-server.js';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

function mockModel(parts: LanguageModelV3StreamPart[]) {
  return new MockLanguageModelV3({ doStream: async () => ({ stream: convertArrayToReadableStream(parts) }) });
}

const baseRequest: ModelRequest = {
  system: 'sys',
  messages: [{ role: 'user', content: 'go' }],
  tools: [{ name: 'list_artifacts', description: 'List artifacts', inputSchema: { type: 'object', properties: {} } }],
};

describe('LanguageModelProvider stream mapping (MockLanguageModelV3)', () => {
  it('maps reasoning, text, tool calls and finish with usage, in order', async () => {
    const model = mockModel([
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'think' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hel' },
      { type: 'text-delta', id: 't', delta: 'lo' },
      { type: 'text-end', id: 't' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'list_artifacts', input: '{}' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'list_artifacts', input: '{"dir":"a"}' },
      { type: 'finish', usage: usage(10, 5), finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ]);
    const p = new LanguageModelProvider(model, { provider: 'mock', model: 'm1' });
    expect(await collect(p.stream(baseRequest))).toEqual([
      { type: 'reasoning-delta', text: 'think' },
      { type: 'reasoning-block', block: { text: 'think' } },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'tool-call', id: 'c1', name: 'list_artifacts', args: {} },
      { type: 'tool-call', id: 'c2', name: 'list_artifacts', args: { dir: 'a' } },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } },
    ]);
  });

  it('reports a call to an unknown tool as a tool-call (the executor answers it), not as a crash', async () => {
    const model = mockModel([
      { type: 'tool-call', toolCallId: 'c1', toolName: 'rm_rf', input: '{"path":"/"}' },
      { type: 'finish', usage: usage(1, 1), finishReason: { unified: 'tool-calls', raw: undefined } },
    ]);
    const parts = await collect(new LanguageModelProvider(model, { provider: 'mock', model: 'm' }).stream(baseRequest));
    expect(parts[0]).toEqual({ type: 'tool-call', id: 'c1', name: 'rm_rf', args: { path: '/' } });
    expect(parts[1]).toMatchObject({ type: 'finish' });
  });

  it('passes tools as function tools with their JSON Schema and no execution', async () => {
    const model = mockModel([{ type: 'finish', usage: usage(1, 1), finishReason: { unified: 'stop', raw: 'stop' } }]);
    await collect(new LanguageModelProvider(model, { provider: 'mock', model: 'm' }).stream(baseRequest));
    const call = model.doStreamCalls[0]!;
    expect(call.tools).toEqual([{ type: 'function', name: 'list_artifacts', description: 'List artifacts', inputSchema: { type: 'object', properties: {} } }]);
    expect(call.prompt[0]).toEqual({ role: 'system', content: 'sys' });
  });

  it('maps our messages to the model prompt: assistant tool calls, tool results (errors marked), grouped batch', async () => {
    const model = mockModel([{ type: 'finish', usage: usage(1, 1), finishReason: { unified: 'stop', raw: 'stop' } }]);
    await collect(
      new LanguageModelProvider(model, { provider: 'mock', model: 'm' }).stream({
        ...baseRequest,
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'a', name: 'list_artifacts', args: {} },
              { id: 'b', name: 'list_artifacts', args: { x: 1 } },
            ],
          },
          { role: 'tool', toolCallId: 'a', toolName: 'list_artifacts', content: '[]', isError: false },
          { role: 'tool', toolCallId: 'b', toolName: 'list_artifacts', content: 'bad args: x', isError: true },
          { role: 'assistant', content: 'done' },
        ],
      }),
    );
    const prompt = model.doStreamCalls[0]!.prompt;
    expect(prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(prompt[2]!.content).toEqual([
      expect.objectContaining({ type: 'tool-call', toolCallId: 'a', toolName: 'list_artifacts', input: {} }),
      expect.objectContaining({ type: 'tool-call', toolCallId: 'b', toolName: 'list_artifacts', input: { x: 1 } }),
    ]);
    expect(prompt[3]!.content).toEqual([
      expect.objectContaining({ type: 'tool-result', toolCallId: 'a', output: { type: 'text', value: '[]' } }),
      expect.objectContaining({ type: 'tool-result', toolCallId: 'b', output: { type: 'error-text', value: 'bad args: x' } }),
    ]);
  });

  it('yields a thrown doStream failure as an error diagnosis, never throwing', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => {
        throw new APICallError({ message: 'Too Many Requests', url: 'http://x', requestBodyValues: {}, statusCode: 429, isRetryable: true });
      },
    });
    const parts = await collect(new LanguageModelProvider(model, { provider: 'mock', model: 'm' }).stream(baseRequest));
    expect(parts).toEqual([{ type: 'error', diagnosis: expect.objectContaining({ code: 'rate_limit', retryable: true }) }]);
  });

  it('yields an error part from the model stream and stops there', async () => {
    const model = mockModel([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'par' },
      { type: 'error', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ]);
    const parts = await collect(new LanguageModelProvider(model, { provider: 'mock', model: 'm' }).stream(baseRequest));
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'par' });
    expect(parts[1]).toMatchObject({ type: 'error', diagnosis: { code: 'overload', retryable: true } });
    expect(parts).toHaveLength(2);
  });

  it('stops with an aborted error when the signal fires mid-stream', async () => {
    const ac = new AbortController();
    const model = new MockLanguageModelV3({
      doStream: async ({ abortSignal }) => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(c) {
            c.enqueue({ type: 'text-start', id: 't' });
            c.enqueue({ type: 'text-delta', id: 't', delta: 'first' });
            abortSignal?.addEventListener('abort', () => c.error(Object.assign(new Error('aborted'), { name: 'AbortError' })));
          },
        }),
      }),
    });
    const seen: string[] = [];
    for await (const part of new LanguageModelProvider(model, { provider: 'mock', model: 'm' }).stream({ ...baseRequest, signal: ac.signal })) {
      seen.push(part.type === 'error' ? `error:${part.diagnosis.code}` : part.type);
      if (part.type === 'text-delta') ac.abort();
    }
    expect(seen).toEqual(['text-delta', 'error:aborted']);
  });
});

describe('toModelMessages', () => {
  it('keeps assistant text beside its tool calls and drops empty assistant turns', () => {
    expect(
      toModelMessages([
        { role: 'assistant', content: '' },
        { role: 'assistant', content: 'Reading', toolCalls: [{ id: 'x', name: 't', args: undefined }] },
      ]),
    ).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading' },
          { type: 'tool-call', toolCallId: 'x', toolName: 't', input: {} },
        ],
      },
    ]);
  });
});
