/**
 * From `--model provider:model` (or a request's `model`) to a ready ModelProvider, with every
 * configuration problem returned as a Diagnosis naming what to fix. Never throws.
 */
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { ModelProvider } from './model-provider.js';
import type { OfflineProcedure } from './model-turn.js';
import { createAiSdkProvider, LanguageModelProvider } from './ai-sdk-provider.js';
import { createOfflineProvider } from './offline-provider.js';
import { PROVIDER_ENV, checkBaseURL, envValue, type AiSdkProviderName, type Env } from './provider-env.js';
import { loadScriptTurns, ScriptProvider } from './script-provider.js';

export const MODEL_PROVIDER_NAMES = ['offline', 'script', 'openai', 'anthropic', 'deepseek', 'openai-compatible', 'ollama'] as const;
export type ModelProviderName = (typeof MODEL_PROVIDER_NAMES)[number];

export type ModelSpec = string | { provider: string; model?: string; baseURL?: string } | undefined | null;

export interface ResolveModelOptions {
  /** The plugin's reference procedure, used by the offline model. */
  offlineProcedure: OfflineProcedure;
  env?: Env;
  /** Script paths resolve against it. */
  cwd?: string;
  /** false: ignore a `baseURL` in an object spec (a server should not let callers send its keys elsewhere). */
  allowSpecBaseURL?: boolean;
  /** false: refuse `script:<file>` (it reads a file from this machine's disk). */
  allowScript?: boolean;
  /** Receives the AI SDK's call warnings (e.g. a setting the model does not support). */
  onWarning?: (text: string) => void;
}

export type ResolveModelResult = { ok: true; provider: ModelProvider } | { ok: false; diagnosis: DiagnosisInit };

const USAGE_HINT = 'Use offline, script:<file.json>, openai:<model>, anthropic:<model>, deepseek:<model>, openai-compatible:<model> or ollama:<model>.';

function problem(code: 'invalid_request' | 'incompatible', summary: string, hint: string, detail = ''): ResolveModelResult {
  return { ok: false, diagnosis: { code, severity: 'error', summary, detail, hint, retryable: false } };
}

/** Splits `provider:model` at the first colon, so `ollama:llama3.1:8b` keeps its tag. */
export function parseModelSpec(spec: ModelSpec): { provider: string; model?: string; baseURL?: string } | { error: string } {
  if (spec === undefined || spec === null) return { provider: 'offline' };
  if (typeof spec === 'string') {
    const s = spec.trim();
    if (!s) return { provider: 'offline' };
    const i = s.indexOf(':');
    if (i < 0) return { provider: s.toLowerCase() };
    const model = s.slice(i + 1).trim();
    return { provider: s.slice(0, i).trim().toLowerCase(), model: model || undefined };
  }
  if (typeof spec !== 'object' || Array.isArray(spec))
    return { error: `model must be a string "provider:model" or an object { provider, model? }, got ${Array.isArray(spec) ? 'array' : typeof spec}` };
  const o = spec as Record<string, unknown>;
  if (typeof o.provider !== 'string' || !o.provider.trim()) return { error: 'model.provider must be a non-empty string' };
  if (o.model !== undefined && typeof o.model !== 'string') return { error: 'model.model must be a string' };
  if (o.baseURL !== undefined && typeof o.baseURL !== 'string') return { error: 'model.baseURL must be a string' };
  const extra = Object.keys(o).filter((k) => !['provider', 'model', 'baseURL'].includes(k));
  if (extra.length) return { error: `model has unknown field(s): ${extra.join(', ')} (allowed: provider, model, baseURL)` };
  return {
    provider: o.provider.trim().toLowerCase(),
    model: typeof o.model === 'string' && o.model.trim() ? o.model.trim() : undefined,
    baseURL: typeof o.baseURL === 'string' && o.baseURL.trim() ? o.baseURL.trim() : undefined,
  };
}

/** Without a spec, RUNTRAIL_MODEL picks the model; without that, the offline model. */
export function resolveModelProvider(spec: ModelSpec, opts: ResolveModelOptions): ResolveModelResult {
  const env = opts.env ?? process.env;
  const noSpec = spec === undefined || spec === null || (typeof spec === 'string' && !spec.trim());
  const parsed = parseModelSpec(noSpec ? envValue(env, 'RUNTRAIL_MODEL') : spec);
  if ('error' in parsed) return problem('invalid_request', parsed.error, USAGE_HINT);
  const { provider: name, model } = parsed;
  const baseURL = opts.allowSpecBaseURL === false ? undefined : parsed.baseURL;

  if (name === 'offline') {
    if (typeof opts.offlineProcedure !== 'function') {
      return problem('incompatible', "The offline model needs the plugin's reference procedure", 'Pass offlineProcedure from the plugin.');
    }
    return { ok: true, provider: createOfflineProvider(opts.offlineProcedure, model ? { model } : {}) };
  }
  if (name === 'script') {
    if (opts.allowScript === false)
      return problem('invalid_request', 'The script model is not allowed here', 'Use the CLI (runtrail run --model script:<file.json>) for scripted runs.');
    if (!model) return problem('invalid_request', 'script needs a file: script:<file.json>', USAGE_HINT);
    const loaded = loadScriptTurns(model, { cwd: opts.cwd });
    if (!loaded.ok) return { ok: false, diagnosis: loaded.diagnosis };
    return { ok: true, provider: new ScriptProvider(loaded.turns, loaded.file) };
  }
  if (!Object.hasOwn(PROVIDER_ENV, name)) {
    return problem('invalid_request', `Unknown model provider "${name}"; valid providers: ${MODEL_PROVIDER_NAMES.join(', ')}`, USAGE_HINT);
  }

  const isOllama = name === 'ollama';
  const sdkName: AiSdkProviderName = isOllama ? 'openai-compatible' : (name as AiSdkProviderName);
  const envSpec = PROVIDER_ENV[name as keyof typeof PROVIDER_ENV];
  const modelId = model ?? envValue(env, envSpec.modelVar) ?? envSpec.defaultModel;
  if (!modelId) {
    return problem('incompatible', `${name} needs a model name: ${name}:<model>`, `Or set ${envSpec.modelVar}.`);
  }
  if (envSpec.keyRequired && !envValue(env, envSpec.keyVar)) {
    return problem(
      'incompatible',
      `Provider ${name} is not configured: ${envSpec.keyVar} is not set`,
      `Export ${envSpec.keyVar}=<your key>, or run with the offline model (--model offline).`,
    );
  }
  const url = baseURL ?? envValue(env, envSpec.baseUrlVar) ?? envSpec.defaultBaseURL;
  if (!url) {
    return problem(
      'incompatible',
      `Provider ${name} is not configured: ${envSpec.baseUrlVar} is not set`,
      `Export ${envSpec.baseUrlVar}=http://host:port/v1 (the server's OpenAI-compatible base URL).`,
    );
  }
  const bad = checkBaseURL(url);
  if (bad) return problem('invalid_request', `Base URL for ${name} is invalid: ${bad}`, `Fix ${baseURL ? 'model.baseURL' : envSpec.baseUrlVar}.`);
  try {
    const provider = createAiSdkProvider({ provider: sdkName, model: modelId, baseURL: url, env, label: name, envSpec, onWarning: opts.onWarning });
    return { ok: true, provider };
  } catch (err) {
    return problem('incompatible', (err as Error).message, USAGE_HINT);
  }
}

/** What resolved_config.json and the manifest say about the model: never a key. */
export interface ProviderDescription {
  provider: string;
  model: string;
  /** host[:port] of the endpoint for network providers, else null. */
  base_url_host: string | null;
}

export function describeProvider(p: ModelProvider): ProviderDescription {
  let host: string | null = null;
  const baseURL = p instanceof LanguageModelProvider ? p.baseURL : (p as { baseURL?: unknown }).baseURL;
  if (typeof baseURL === 'string') {
    try {
      host = new URL(baseURL).host;
    } catch {
      host = null;
    }
  }
  return { provider: p.provider, model: p.model, base_url_host: host };
}
