/**
 * Real models through the Vercel AI SDK v6: one model step per `stream()` call, tools reported as
 * `tool-call` parts (never executed here), every failure yielded as a Diagnosis, never thrown.
 */
import type { LanguageModel } from 'ai';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { loadAi, loadLanguageModel } from './ai-sdk-modules.js';
import type { ModelProvider, ModelRequest, ModelStreamPart, ProviderMetadata, ReasoningBlock, TokenUsage } from './model-provider.js';
import { toModelMessages, toSystem, toToolSet, type MappingOptions, type ModelApi } from './message-mapping.js';
import { fitRequest } from './context-fit.js';
import { modelInfo, type ModelInfo } from './model-catalog.js';
import { callOptions } from './provider-call-options.js';
import { diagnoseProviderError, redactSecrets } from './provider-errors.js';
import { PROVIDER_ENV, checkBaseURL, envValue, type AiSdkProviderName, type Env } from './provider-env.js';
import { abortedDiagnosis } from './turn-stream.js';
import { sentRequestOfCall } from './ai-sdk-sent-request.js';

type FinishReason = Extract<ModelStreamPart, { type: 'finish' }>['reason'];
const FINISH_REASONS: readonly string[] = ['stop', 'tool-calls', 'length', 'content-filter', 'other'];

export interface LanguageModelProviderOptions {
  /** Name shown in diagnoses and resolved_config.json, e.g. 'openai' or 'ollama'. */
  provider: string;
  model: string;
  baseURL?: string;
  /** Env var holding the key, named in auth hints. */
  keyEnvVar?: string;
  /** Values scrubbed from every message (the API key). */
  secrets?: string[];
  /** Overrides the output limit the catalog and the context window give. */
  maxOutputTokens?: number;
  temperature?: number;
  /** Receives the SDK's call warnings (unsupported settings and the like). */
  onWarning?: (text: string) => void;
  /** The API's dialect (reasoning, caching, images); default from the model's SDK provider id. */
  api?: ModelApi;
  /** Catalog facts (window, output limit, vision, prices); default modelInfo(provider, model). */
  info?: ModelInfo | null;
}

/** 'anthropic.messages' → anthropic, 'openai.chat' → openai, …; anything else speaks no dialect we tune. */
function apiOf(model: LanguageModel): ModelApi {
  const id = typeof model === 'string' ? '' : model.provider;
  const head = id.split('.')[0] ?? '';
  if (head === 'anthropic' || head === 'openai' || head === 'deepseek') return head;
  return 'generic';
}

/** The part of the AI SDK's LanguageModelUsage we read. */
interface SdkUsage {
  inputTokens?: number;
  outputTokens?: number;
  inputTokenDetails?: { cacheReadTokens?: number; cacheWriteTokens?: number };
  outputTokenDetails?: { reasoningTokens?: number };
}

/** The SDK's usage with its cache and reasoning details; absent details are left out, not zero. */
export function usageOf(u: SdkUsage): TokenUsage {
  const usage: TokenUsage = { inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 };
  const cacheRead = u.inputTokenDetails?.cacheReadTokens;
  const cacheWrite = u.inputTokenDetails?.cacheWriteTokens;
  const reasoning = u.outputTokenDetails?.reasoningTokens;
  if (typeof cacheRead === 'number') usage.cachedInputTokens = cacheRead;
  if (typeof cacheWrite === 'number') usage.cacheWriteTokens = cacheWrite;
  if (typeof reasoning === 'number') usage.reasoningTokens = reasoning;
  return usage;
}

/** Later metadata wins, as in the SDK's own step content (Anthropic sends the signature last). */
function mergeMetadata(block: ReasoningBlock, meta: unknown): void {
  if (meta && typeof meta === 'object' && Object.keys(meta).length) block.providerMetadata = meta as ProviderMetadata;
}

/**
 * The SDK prints warnings with console.info/warn by default, which would corrupt NDJSON on
 * stdout (`runtrail run --json`); warnings reach `onWarning` instead. A user's own setting wins.
 */
function silenceGlobalWarningLog(): void {
  const g = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
  if (g.AI_SDK_LOG_WARNINGS === undefined) g.AI_SDK_LOG_WARNINGS = false;
}

/** Any AI SDK language model as a ModelProvider (tests pass a MockLanguageModelV3), or a loader of one
 *  (createAiSdkProvider: the provider's package is loaded when the model first streams). */
export class LanguageModelProvider implements ModelProvider {
  readonly provider: string;
  readonly model: string;
  readonly baseURL: string | undefined;
  readonly api: ModelApi;
  /** What the catalog knows about this model; null when it is not listed. */
  readonly info: ModelInfo | null;
  // ES private fields: JSON.stringify or a logger dumping the provider never sees the key.
  #languageModel: LanguageModel | Promise<LanguageModel> | (() => Promise<LanguageModel>);
  readonly #opts: LanguageModelProviderOptions;

  constructor(languageModel: LanguageModel | (() => Promise<LanguageModel>), opts: LanguageModelProviderOptions) {
    this.#languageModel = languageModel;
    this.provider = opts.provider;
    this.model = opts.model;
    this.baseURL = opts.baseURL;
    this.api = opts.api ?? (typeof languageModel === 'function' ? 'generic' : apiOf(languageModel));
    this.info = opts.info !== undefined ? opts.info : modelInfo(opts.provider, opts.model);
    this.#opts = opts;
    silenceGlobalWarningLog();
  }

  private languageModel(): Promise<LanguageModel> | LanguageModel {
    const m = this.#languageModel;
    if (typeof m === 'function') this.#languageModel = m();
    return this.#languageModel as Promise<LanguageModel> | LanguageModel;
  }

  toJSON(): { provider: string; model: string; baseURL?: string } {
    return { provider: this.provider, model: this.model, baseURL: this.baseURL };
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const ctx = { provider: this.provider, model: this.model, keyEnvVar: this.#opts.keyEnvVar, secrets: this.#opts.secrets };
    const label = `${this.provider}:${this.model}`;
    if (request.signal?.aborted) {
      yield { type: 'error', diagnosis: abortedDiagnosis(label) };
      return;
    }
    const calls = callOptions({
      api: this.api,
      reasoning: request.reasoning ?? 'off',
      cacheKey: request.cacheKey,
      info: this.info,
      label,
      compatibleName: this.api === 'openai-compatible' ? this.provider : undefined,
    });
    for (const text of calls.notices) yield { type: 'notice', text };
    const fit = fitRequest(request, { label, info: this.info, maxOutputTokens: this.#opts.maxOutputTokens, reasoningBudget: calls.reasoningBudget });
    if (!fit.ok) {
      yield { type: 'error', diagnosis: fit.diagnosis };
      return;
    }
    // Anthropic: breakpoints after the tools, the system prompt and the newest message
    const mapping: MappingOptions = { api: this.api, vision: this.info?.vision === true, cache: true, modelLabel: label };
    const reasoning = new Map<string, ReasoningBlock>();
    // what the model's adapter receives, and the settings of the body it sent, reported once before any output
    let params: LanguageModelV3CallOptions | null = null;
    let body: unknown;
    let reported = !request.reportRequest;
    const report = (): ModelStreamPart[] => {
      if (reported || !params) return [];
      reported = true;
      return [
        { type: 'request', request: sentRequestOfCall(params, { model: label, reasoning: request.reasoning ?? 'off', cacheKey: request.cacheKey }, body) },
      ];
    };
    try {
      const [{ streamText, jsonSchema, wrapLanguageModel }, model] = await Promise.all([loadAi(), this.languageModel()]);
      const observed =
        request.reportRequest && typeof model === 'object' && model.specificationVersion === 'v3'
          ? wrapLanguageModel({
              model,
              middleware: {
                specificationVersion: 'v3',
                transformParams: async ({ params: p }) => {
                  params = p;
                  return p;
                },
                wrapStream: async ({ doStream }) => {
                  const r = await doStream();
                  body = r.request?.body;
                  return r;
                },
              },
            })
          : model;
      const result = streamText({
        model: observed,
        system: toSystem(request.system, mapping),
        messages: toModelMessages(request.messages, mapping),
        tools: request.tools.length ? toToolSet(request.tools, mapping, jsonSchema) : undefined,
        // The agent loop owns recovery (backoff, limits); a hidden SDK retry would double it.
        maxRetries: 0,
        abortSignal: request.signal,
        maxOutputTokens: fit.maxOutputTokens,
        temperature: this.#opts.temperature,
        ...(calls.providerOptions ? { providerOptions: calls.providerOptions } : {}),
        // Errors arrive as 'error' parts below; the default handler would print them to stderr.
        onError: () => {},
      });
      for await (const part of result.fullStream) {
        // after 'start' comes the step, once the API took the request (its body is known then)
        if (part.type !== 'start') yield* report();
        switch (part.type) {
          case 'text-delta':
            if (part.text) yield { type: 'text-delta', text: part.text };
            break;
          case 'reasoning-start': {
            const block: ReasoningBlock = { text: '' };
            mergeMetadata(block, part.providerMetadata);
            reasoning.set(part.id, block);
            break;
          }
          case 'reasoning-delta': {
            const block = reasoning.get(part.id);
            if (block) {
              block.text += part.text;
              mergeMetadata(block, part.providerMetadata);
            }
            if (part.text) yield { type: 'reasoning-delta', text: part.text };
            break;
          }
          case 'reasoning-end': {
            const block = reasoning.get(part.id);
            if (block) {
              mergeMetadata(block, part.providerMetadata);
              reasoning.delete(part.id);
              yield { type: 'reasoning-block', block };
            }
            break;
          }
          case 'tool-call':
            yield { type: 'tool-call', id: part.toolCallId, name: part.toolName, args: part.input };
            break;
          case 'finish': {
            const reason: FinishReason = FINISH_REASONS.includes(part.finishReason) ? (part.finishReason as FinishReason) : 'other';
            yield { type: 'finish', reason, usage: usageOf(part.totalUsage) };
            return;
          }
          case 'start-step':
            for (const w of part.warnings) this.#opts.onWarning?.(`${label}: ${JSON.stringify(w)}`);
            break;
          case 'abort':
            yield { type: 'error', diagnosis: abortedDiagnosis(label) };
            return;
          case 'error':
            yield { type: 'error', diagnosis: request.signal?.aborted ? abortedDiagnosis(label) : diagnoseProviderError(part.error, ctx) };
            return;
          default:
            // step markers, text start/end, tool-input streaming, sources: nothing the loop needs.
            break;
        }
      }
    } catch (err) {
      yield* report();
      yield { type: 'error', diagnosis: request.signal?.aborted ? abortedDiagnosis(label) : diagnoseProviderError(err, ctx) };
    }
  }
}

export interface AiSdkProviderOptions {
  provider: AiSdkProviderName;
  model: string;
  /** Defaults to the provider's env var (OPENAI_API_KEY, ANTHROPIC_API_KEY, DEEPSEEK_API_KEY, OPENAI_COMPATIBLE_API_KEY). */
  apiKey?: string;
  /** Defaults to OPENAI_BASE_URL, ANTHROPIC_BASE_URL, DEEPSEEK_BASE_URL or OPENAI_COMPATIBLE_BASE_URL, then the public endpoint. */
  baseURL?: string;
  /** Environment to read; process.env when absent. */
  env?: Env;
  /** Display name for an OpenAI-compatible server, e.g. 'ollama'. */
  label?: string;
  /** Env vars to read instead of the provider's own (the `ollama:` alias uses OLLAMA_*). */
  envSpec?: (typeof PROVIDER_ENV)[keyof typeof PROVIDER_ENV];
  maxOutputTokens?: number;
  temperature?: number;
  onWarning?: (text: string) => void;
}

/**
 * Builds a provider for OpenAI (chat completions), Anthropic, DeepSeek or any OpenAI-compatible
 * server. Throws a TypeError naming the env var when a required key or base URL is missing;
 * resolveModelProvider returns the same problem as data.
 */
export function createAiSdkProvider(opts: AiSdkProviderOptions): LanguageModelProvider {
  const spec = opts.envSpec ?? PROVIDER_ENV[opts.provider];
  if (!spec) throw new TypeError(`createAiSdkProvider: unknown provider "${String(opts.provider)}"; valid: openai, anthropic, deepseek, openai-compatible`);
  if (!opts.model || typeof opts.model !== 'string') throw new TypeError('createAiSdkProvider: model must be a non-empty string');
  const env = opts.env ?? process.env;
  const apiKey = opts.apiKey ?? envValue(env, spec.keyVar);
  const baseURL = (opts.baseURL ?? envValue(env, spec.baseUrlVar) ?? spec.defaultBaseURL ?? undefined)?.replace(/\/+$/, '');
  const label = opts.label ?? opts.provider;
  if (spec.keyRequired && !apiKey) throw new TypeError(`${label}: no API key; set ${spec.keyVar}`);
  if (!baseURL) throw new TypeError(`${label}: no base URL; set ${spec.baseUrlVar} (e.g. http://127.0.0.1:11434/v1)`);
  const bad = checkBaseURL(baseURL);
  if (bad) throw new TypeError(`${label}: base URL ${redactSecrets(bad, apiKey ? [apiKey] : [])} (${opts.baseURL ? 'baseURL option' : spec.baseUrlVar})`);

  const provider = opts.provider;
  return new LanguageModelProvider(() => loadLanguageModel(provider, { apiKey, baseURL, label, model: opts.model }), {
    api: opts.provider,
    // an OpenAI-compatible server's models are not in the catalogs under its label (ollama)
    ...(opts.provider === 'openai-compatible' ? { info: null } : {}),
    provider: label,
    model: opts.model,
    baseURL,
    keyEnvVar: spec.keyVar,
    secrets: apiKey ? [apiKey] : [],
    maxOutputTokens: opts.maxOutputTokens,
    temperature: opts.temperature,
    onWarning: opts.onWarning,
  });
}
