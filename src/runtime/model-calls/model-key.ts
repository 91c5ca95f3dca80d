/** Which environment variable holds the key a model spec needs (`openai:gpt-4o` → OPENAI_API_KEY). */
import { PROVIDER_ENV } from '../../providers/provider-env.js';
import { parseModelSpec } from '../../providers/resolve-model-provider.js';

/** The key's variable, or null for a model that runs without one (offline, script, Ollama, an unknown spec). */
export function modelKeyVar(spec: string): string | null {
  const parsed = parseModelSpec(spec);
  if ('error' in parsed) return null;
  const p = (PROVIDER_ENV as Record<string, (typeof PROVIDER_ENV)[keyof typeof PROVIDER_ENV] | undefined>)[parsed.provider];
  return p?.keyRequired ? p.keyVar : null;
}
