/**
 * The call an AI SDK model adapter received (LanguageModelV3CallOptions: the prompt after mapping,
 * fitting and cache marks, the tools, the settings) as a SentRequest: what the model-call record
 * keeps of "what the model was sent", one step before the adapter writes it as its API's JSON.
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3ToolResultOutput,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import { GENAI_REASONING_PART, type ReasoningEffort, type SentMessage, type SentPart, type SentRequest, type ToolSpec } from './model-provider.js';
import { blobPart, uriPart } from './sent-request.js';

/** A prompt-cache breakpoint in any provider's options (`cacheControl` / `cache_control`). */
function marksCache(o: SharedV3ProviderOptions | undefined): boolean {
  if (!o) return false;
  return Object.values(o).some((v) => v && typeof v === 'object' && ('cacheControl' in v || 'cache_control' in v));
}

function dataPart(data: LanguageModelV3FilePart['data'], mediaType: string, label?: string): SentPart {
  if (data instanceof URL) return uriPart(mediaType, data.href);
  if (typeof data === 'string') return /^(?:https?|data):/i.test(data) ? uriPart(mediaType, data) : blobPart(mediaType, data, label);
  return blobPart(mediaType, Buffer.from(data).toString('base64'), label);
}

/** A tool result's output: its text or JSON as the response, its images and files as parts after it. */
function toolOutput(out: LanguageModelV3ToolResultOutput): { response: unknown; isError: boolean; extra: SentPart[] } {
  switch (out.type) {
    case 'text':
    case 'json':
      return { response: out.value, isError: false, extra: [] };
    case 'error-text':
    case 'error-json':
      return { response: out.value, isError: true, extra: [] };
    case 'execution-denied':
      return { response: out.reason ?? 'execution denied', isError: true, extra: [] };
    case 'content': {
      const texts: string[] = [];
      const extra: SentPart[] = [];
      for (const p of out.value) {
        if (p.type === 'text') texts.push(p.text);
        else if (p.type === 'image-data' || p.type === 'file-data') extra.push(blobPart(p.mediaType, p.data));
        else if (p.type === 'image-url' || p.type === 'file-url')
          extra.push(uriPart('mediaType' in p && p.mediaType ? p.mediaType : 'application/octet-stream', p.url));
        else extra.push({ type: 'text', content: `[${p.type}]` });
      }
      return { response: texts.join('\n'), isError: false, extra };
    }
  }
}

function partsOf(m: LanguageModelV3Message): SentPart[] {
  if (m.role === 'system') return [{ type: 'text', content: m.content }];
  const parts: SentPart[] = [];
  for (const p of m.content) {
    switch (p.type) {
      case 'text':
        parts.push({ type: 'text', content: p.text });
        break;
      case 'file':
        parts.push(dataPart(p.data, p.mediaType, p.filename));
        break;
      case 'reasoning': {
        const meta = p.providerOptions?.anthropic as Record<string, unknown> | undefined;
        parts.push({
          type: GENAI_REASONING_PART,
          content: p.text,
          ...(typeof meta?.signature === 'string' ? { signed: true as const } : {}),
          ...(meta?.redactedData !== undefined ? { redacted: true as const } : {}),
        });
        break;
      }
      case 'tool-call':
        parts.push({ type: 'tool_call', id: p.toolCallId, name: p.toolName, arguments: p.input });
        break;
      case 'tool-result': {
        const o = toolOutput(p.output);
        parts.push(
          { type: 'tool_call_response', id: p.toolCallId, name: p.toolName, response: o.response, ...(o.isError ? { is_error: true as const } : {}) },
          ...o.extra,
        );
        break;
      }
      default:
        // approval responses: not something Runtrail sends
        parts.push({ type: 'text', content: `[${p.type}]` });
    }
  }
  return parts;
}

function lastPartMarksCache(m: LanguageModelV3Message): boolean {
  if (marksCache(m.providerOptions)) return true;
  if (m.role === 'system') return false;
  const last = m.content[m.content.length - 1] as { providerOptions?: SharedV3ProviderOptions } | undefined;
  return marksCache(last?.providerOptions);
}

export interface CallContext {
  /** provider:model */
  model: string;
  reasoning: ReasoningEffort;
  cacheKey: string | undefined;
}

/** The body's own keys that carry content, not settings. */
const CONTENT_KEYS = new Set(['messages', 'system', 'tools', 'input', 'prompt', 'contents', 'tool_choice', 'instructions']);

/** The settings of the API's request body (its top level without the content): what the API itself was told. */
function bodySettings(body: unknown): Record<string, unknown> | null {
  let b = body;
  if (typeof b === 'string') {
    try {
      b = JSON.parse(b);
    } catch {
      return null;
    }
  }
  if (!b || typeof b !== 'object' || Array.isArray(b)) return null;
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => !CONTENT_KEYS.has(k) && v !== undefined));
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** `body`: the request body the adapter sent, when it tells (its settings are kept as `api`). */
export function sentRequestOfCall(params: LanguageModelV3CallOptions, ctx: CallContext, body?: unknown): SentRequest {
  const api = bodySettings(body);
  const system: string[] = [];
  const messages: SentMessage[] = [];
  const breakpoints: string[] = [];
  for (const m of params.prompt) {
    if (m.role === 'system') {
      system.push(m.content);
      if (marksCache(m.providerOptions)) breakpoints.push('system');
      continue;
    }
    const cache = lastPartMarksCache(m);
    if (cache) breakpoints.push(`messages[${messages.length}]`);
    messages.push({ role: m.role, parts: partsOf(m), ...(cache ? { cache: 'ephemeral' as const } : {}) });
  }
  const tools: ToolSpec[] = [];
  for (const t of params.tools ?? []) {
    if (t.type !== 'function') continue;
    tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as Record<string, unknown> });
    if (marksCache(t.providerOptions) && !breakpoints.includes('tools')) breakpoints.unshift('tools');
  }
  return {
    source: 'api',
    system: system.join('\n\n'),
    messages,
    tools,
    settings: {
      model: ctx.model,
      temperature: num(api?.temperature) ?? params.temperature ?? null,
      // the API's own limit: an adapter may add to the asked-for one (Anthropic adds the thinking budget)
      max_output_tokens: num(api?.max_tokens) ?? num(api?.max_completion_tokens) ?? num(api?.max_output_tokens) ?? params.maxOutputTokens ?? null,
      reasoning: ctx.reasoning,
      cache_key: ctx.cacheKey ?? null,
      cache_breakpoints: breakpoints,
      provider_options: params.providerOptions && Object.keys(params.providerOptions).length ? (params.providerOptions as Record<string, unknown>) : null,
      ...(api ? { api } : {}),
    },
  };
}
