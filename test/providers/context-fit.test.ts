import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_TOKENS, MIN_REPLY_TOKENS, fitRequest } from '../../src/providers/context-fit.js';
import { modelInfo } from '../../src/providers/model-catalog.js';
import type { ModelRequest } from '../../src/providers/model-provider.js';
import { IMAGE_TOKENS, estimateRequestTokens, estimateTokens } from '../../src/providers/token-estimate.js';

const req = (content: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({ system: '', messages: [{ role: 'user', content }], tools: [], ...extra });

describe('estimateTokens', () => {
  it('counts about 4 ASCII characters a token and one token a CJK character', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd'.repeat(100))).toBe(100);
    expect(estimateTokens('数据同步失败')).toBe(6);
    // Vietnamese letters with diacritics: two a token
    expect(estimateTokens('đồng bộ')).toBe(Math.ceil(4 / 4 + 3 / 2));
  });

  it('weighs a request with its system prompt, tools, tool calls, reasoning and images', () => {
    const base = estimateRequestTokens(req('x'));
    const withImage = estimateRequestTokens({
      system: '',
      tools: [],
      messages: [{ role: 'tool', toolCallId: 'c', toolName: 't', content: 'x', isError: false, images: [{ mediaType: 'image/png', data: 'AAAA' }] }],
    });
    expect(withImage - base).toBe(IMAGE_TOKENS);
    const withTools = estimateRequestTokens(
      req('x', { system: 's'.repeat(400), tools: [{ name: 'read', description: 'd'.repeat(40), inputSchema: { type: 'object' } }] }),
    );
    expect(withTools).toBeGreaterThan(base + 100 + 10);
    const withReasoning = estimateRequestTokens({
      system: '',
      tools: [],
      messages: [{ role: 'assistant', content: '', reasoning: [{ text: 'r'.repeat(400) }] }],
    });
    expect(withReasoning).toBeGreaterThanOrEqual(100);
  });
});

describe('fitRequest', () => {
  const haiku = modelInfo('anthropic', 'claude-haiku-4-5');
  const mini = modelInfo('openai', 'gpt-4o-mini');

  it('limits the reply to the catalog maximum, the default cap and the room left in the window', () => {
    expect(fitRequest(req('hi'), { label: 'm', info: mini })).toMatchObject({ ok: true, maxOutputTokens: 16_384, contextWindow: 128_000 });
    expect(fitRequest(req('hi'), { label: 'm', info: haiku })).toMatchObject({ ok: true, maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS, contextWindow: 200_000 });
    const near = fitRequest(req('abcd'.repeat(120_000)), { label: 'm', info: mini }); // ~120k of 128k
    expect(near.ok && near.maxOutputTokens).toBeLessThan(8_100);
    expect(near.ok && near.maxOutputTokens).toBeGreaterThanOrEqual(MIN_REPLY_TOKENS);
  });

  it('lets limits.context_tokens override the window, and an explicit output limit win', () => {
    const r = fitRequest(req('abcd'.repeat(1000), { contextTokens: 3000 }), { label: 'm', info: haiku, maxOutputTokens: 500 });
    expect(r).toMatchObject({ ok: true, maxOutputTokens: 500, contextWindow: 3000 });
  });

  it('refuses a request without room for a reply, naming the estimate and the window', () => {
    const r = fitRequest(req('abcd'.repeat(3500), { contextTokens: 4000 }), { label: 'anthropic:claude-haiku-4-5', info: haiku });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.diagnosis).toMatchObject({ code: 'context_length', severity: 'error', retryable: false });
    expect(r.diagnosis.summary).toBe('The request does not fit anthropic:claude-haiku-4-5: about 3504 input tokens, limits.context_tokens is 4000');
  });

  it('reserves the thinking budget: a request that fits without reasoning may not fit with it', () => {
    const big = req('abcd'.repeat(6000), { contextTokens: 10_000 });
    expect(fitRequest(big, { label: 'm', info: haiku }).ok).toBe(true);
    expect(fitRequest(big, { label: 'm', info: haiku, reasoningBudget: 8192 }).ok).toBe(false);
  });

  it('checks nothing and sends no limit when nothing is known about the model', () => {
    expect(fitRequest(req('abcd'.repeat(1_000_000)), { label: 'm', info: null })).toEqual({
      ok: true,
      maxOutputTokens: undefined,
      estimatedInputTokens: expect.any(Number),
      contextWindow: null,
    });
  });
});
