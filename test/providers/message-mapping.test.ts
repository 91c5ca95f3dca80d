import { describe, expect, it } from 'vitest';
import { jsonSchema } from 'ai';
import { MAX_IMAGE_BYTES, toModelMessages, toSystem, toToolSet } from '../../src/providers/message-mapping.js';
import type { ChatMessage } from '../../src/providers/model-provider.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const signed = { text: 'think', providerMetadata: { anthropic: { signature: 'sig' } } };
const toolTurn: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'shot', args: {} }], reasoning: [signed] };

describe('reasoning goes back only where the API wants it', () => {
  it('anthropic: the signed blocks of a tool-calling turn, before its tool calls', () => {
    const [m] = toModelMessages([toolTurn], { api: 'anthropic' });
    expect(m).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'think', providerOptions: { anthropic: { signature: 'sig' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'shot', input: {} },
      ],
    });
  });

  it.each(['openai', 'deepseek', 'openai-compatible', 'generic'] as const)('%s: never', (api) => {
    const [m] = toModelMessages([toolTurn], { api });
    expect(m!.content).toEqual([{ type: 'tool-call', toolCallId: 'c1', toolName: 'shot', input: {} }]);
  });
});

describe('images', () => {
  const result = (
    images: Array<{ mediaType: string; data: string; label?: string }>,
    extra: Partial<Extract<ChatMessage, { role: 'tool' }>> = {},
  ): ChatMessage => ({
    role: 'tool',
    toolCallId: 'c1',
    toolName: 'shot',
    content: 'a screenshot',
    isError: false,
    images,
    ...extra,
  });

  it('a model without image input gets a withheld line naming the image and why', () => {
    const [m] = toModelMessages([result([{ mediaType: 'image/png', data: PNG, label: 'page.png' }])], { api: 'anthropic', vision: false, modelLabel: 'x:y' });
    expect(m!.content).toEqual([
      expect.objectContaining({ output: { type: 'text', value: 'a screenshot\n[image withheld: page.png (image/png, 1 KB): x:y does not take image input]' } }),
    ]);
  });

  it('a vision model still gets a withheld line for a type it cannot read or an image over the size limit', () => {
    const tooBig = 'A'.repeat(Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 8);
    const [m] = toModelMessages(
      [
        result([
          { mediaType: 'image/svg+xml', data: 'PHN2Zy8+' },
          { mediaType: 'image/jpeg', data: tooBig },
        ]),
      ],
      { api: 'anthropic', vision: true },
    );
    const value = (m!.content as Array<{ output: { value: string } }>)[0]!.output.value;
    expect(value).toContain('image/svg+xml is not an image type models read');
    expect(value).toContain('larger than 5 MB');
  });

  it('chat-completions APIs: one user message after the whole batch of tool results carries the images', () => {
    const out = toModelMessages(
      [
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'c1', name: 'shot', args: {} },
            { id: 'c2', name: 'shot', args: {} },
          ],
        },
        result([{ mediaType: 'image/png', data: PNG }]),
        result([{ mediaType: 'image/jpeg', data: PNG }], { toolCallId: 'c2' }),
        { role: 'user', content: 'next' },
      ],
      { api: 'openai', vision: true },
    );
    expect(out.map((m) => m.role)).toEqual(['assistant', 'tool', 'user', 'user']);
    expect(out[1]!.content).toHaveLength(2);
    expect(out[2]!.content).toEqual([
      { type: 'text', text: 'Image returned by shot (c1):' },
      { type: 'image', image: PNG, mediaType: 'image/png' },
      { type: 'text', text: 'Image returned by shot (c2):' },
      { type: 'image', image: PNG, mediaType: 'image/jpeg' },
    ]);
  });

  it('an image on a user message (an uploaded input) becomes an image part beside the text', () => {
    const [m] = toModelMessages([{ role: 'user', content: 'what is this?', images: [{ mediaType: 'image/png', data: PNG }] }], { api: 'openai', vision: true });
    expect(m).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', image: PNG, mediaType: 'image/png' },
      ],
    });
  });

  it('the images of a failed tool result are not sent', () => {
    const [m] = toModelMessages([result([{ mediaType: 'image/png', data: PNG }], { isError: true, content: 'Error: boom' })], {
      api: 'anthropic',
      vision: true,
    });
    expect(m!.content).toEqual([expect.objectContaining({ output: { type: 'error-text', value: 'Error: boom' } })]);
  });
});

describe('cache breakpoints', () => {
  const convo: ChatMessage[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'more' },
  ];

  it('anthropic: the newest message, the system prompt and the last tool', () => {
    const out = toModelMessages(convo, { api: 'anthropic', cache: true });
    expect(out.map((m) => m.providerOptions ?? null)).toEqual([null, null, { anthropic: { cacheControl: { type: 'ephemeral' } } }]);
    expect(toSystem('sys', { api: 'anthropic', cache: true })).toEqual({
      role: 'system',
      content: 'sys',
      providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
    });
    const set = toToolSet(
      [
        { name: 'a', description: 'A', inputSchema: { type: 'object' } },
        { name: 'b', description: 'B', inputSchema: { type: 'object' } },
      ],
      { api: 'anthropic', cache: true },
      jsonSchema,
    );
    expect(Object.keys(set)).toEqual(['a', 'b']);
    expect(set.a!.providerOptions).toBeUndefined();
    expect(set.b!.providerOptions).toEqual({ anthropic: { cacheControl: { type: 'ephemeral' } } });
  });

  it('other APIs: none (OpenAI and DeepSeek cache prefixes by themselves)', () => {
    expect(toModelMessages(convo, { api: 'openai', cache: true }).some((m) => m.providerOptions)).toBe(false);
    expect(toSystem('sys', { api: 'deepseek', cache: true })).toBe('sys');
  });
});
