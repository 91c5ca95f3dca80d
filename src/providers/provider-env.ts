/** Where each AI SDK provider finds its key, base URL and default model in the environment. */
export type Env = Readonly<Record<string, string | undefined>>;

export const AI_SDK_PROVIDERS = ['openai', 'anthropic', 'deepseek', 'openai-compatible'] as const;
export type AiSdkProviderName = (typeof AI_SDK_PROVIDERS)[number];

export interface ProviderEnvSpec {
  keyVar: string;
  /** false: servers such as Ollama or llama.cpp run without a key. */
  keyRequired: boolean;
  baseUrlVar: string;
  defaultBaseURL: string | null;
  modelVar: string;
  defaultModel: string | null;
}

export const PROVIDER_ENV: Record<AiSdkProviderName | 'ollama', ProviderEnvSpec> = {
  openai: {
    keyVar: 'OPENAI_API_KEY',
    keyRequired: true,
    baseUrlVar: 'OPENAI_BASE_URL',
    defaultBaseURL: 'https://api.openai.com/v1',
    modelVar: 'OPENAI_MODEL',
    defaultModel: 'gpt-4o-mini',
  },
  anthropic: {
    keyVar: 'ANTHROPIC_API_KEY',
    keyRequired: true,
    baseUrlVar: 'ANTHROPIC_BASE_URL',
    defaultBaseURL: 'https://api.anthropic.com/v1',
    modelVar: 'ANTHROPIC_MODEL',
    defaultModel: 'claude-haiku-4-5',
  },
  deepseek: {
    keyVar: 'DEEPSEEK_API_KEY',
    keyRequired: true,
    baseUrlVar: 'DEEPSEEK_BASE_URL',
    defaultBaseURL: 'https://api.deepseek.com',
    modelVar: 'DEEPSEEK_MODEL',
    defaultModel: 'deepseek-chat',
  },
  'openai-compatible': {
    keyVar: 'OPENAI_COMPATIBLE_API_KEY',
    keyRequired: false,
    baseUrlVar: 'OPENAI_COMPATIBLE_BASE_URL',
    defaultBaseURL: null,
    modelVar: 'OPENAI_COMPATIBLE_MODEL',
    defaultModel: null,
  },
  ollama: {
    keyVar: 'OLLAMA_API_KEY',
    keyRequired: false,
    baseUrlVar: 'OLLAMA_BASE_URL',
    defaultBaseURL: 'http://127.0.0.1:11434/v1',
    modelVar: 'OLLAMA_MODEL',
    defaultModel: 'llama3.1',
  },
};

/** An env value, with blank strings treated as unset. */
export function envValue(env: Env, name: string): string | undefined {
  const v = env[name];
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/** null when the URL is usable; else what is wrong with it. */
export function checkBaseURL(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `"${url}" is not a URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `"${url}" must use http or https`;
  if (u.username || u.password) return 'the base URL must not contain credentials';
  return null;
}
