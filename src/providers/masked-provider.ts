/**
 * What a model is sent, with the server's secrets masked (see events/secret-masker.ts): the system
 * prompt, every message's text, the arguments of the tool calls it made and its reasoning. Images are
 * sent as they are (bytes, not text). A run's provider is wrapped once when it is chosen, so every
 * call — turns, retries, compaction summaries — goes through it.
 */
import { serverSecrets } from '../events/secret-masker.js';
import type { ChatMessage, ModelProvider, ModelRequest } from './model-provider.js';

/** A message masked once per set of secrets: a long conversation is not scanned again at each turn. */
const maskedMessages = new WeakMap<ChatMessage, { version: number; masked: ChatMessage }>();

function maskMessage(m: ChatMessage): ChatMessage {
  const version = serverSecrets.version;
  const hit = maskedMessages.get(m);
  if (hit && hit.version === version) return hit.masked;
  const content = serverSecrets.mask(m.content);
  let masked: ChatMessage = content === m.content ? m : { ...m, content };
  if (m.role === 'assistant' && (m.toolCalls?.length || m.reasoning?.length)) {
    const toolCalls = m.toolCalls && serverSecrets.maskDeep(m.toolCalls);
    const reasoning = m.reasoning?.map((r) => (serverSecrets.mask(r.text) === r.text ? r : { ...r, text: serverSecrets.mask(r.text) }));
    if (toolCalls !== m.toolCalls || reasoning?.some((r, i) => r !== m.reasoning?.[i])) masked = { ...(masked as typeof m), toolCalls, reasoning };
  }
  maskedMessages.set(m, { version, masked });
  return masked;
}

function maskMessages(ms: ChatMessage[]): ChatMessage[] {
  let out: ChatMessage[] | null = null;
  for (let i = 0; i < ms.length; i++) {
    const m = maskMessage(ms[i]);
    if (m !== ms[i]) {
      out ??= ms.slice();
      out[i] = m;
    }
  }
  return out ?? ms;
}

export function maskRequest(req: ModelRequest): ModelRequest {
  if (serverSecrets.size === 0) return req;
  const system = serverSecrets.mask(req.system);
  const messages = maskMessages(req.messages);
  const summaryOf = req.summaryOf && maskMessages(req.summaryOf);
  if (system === req.system && messages === req.messages && summaryOf === req.summaryOf) return req;
  return { ...req, system, messages, ...(summaryOf ? { summaryOf } : {}) };
}

/**
 * `inner` with every request masked. The same object otherwise (its fields, its methods, `instanceof`):
 * code that describes the provider sees the one it chose.
 */
export function maskedProvider(inner: ModelProvider): ModelProvider {
  const stream = (req: ModelRequest) => inner.stream(maskRequest(req));
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'stream') return stream;
      const v: unknown = Reflect.get(target, prop, target);
      // methods run on the provider itself (its private fields are not the proxy's)
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
