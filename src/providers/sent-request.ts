/** Runtrail's own messages and settings as a SentRequest (the shape is in model-provider.ts). */
import {
  GENAI_REASONING_PART,
  type ChatMessage,
  type ImageAttachment,
  type Modality,
  type ReasoningBlock,
  type ReasoningEffort,
  type SentMessage,
  type SentPart,
  type SentSettings,
} from './model-provider.js';

function modalityOf(mimeType: string): Modality {
  const head = mimeType.split('/')[0];
  return head === 'image' || head === 'video' || head === 'audio' ? head : 'file';
}

export function blobPart(mimeType: string, base64: string, label?: string): SentPart {
  return { type: 'blob', modality: modalityOf(mimeType), mime_type: mimeType, content: base64, ...(label ? { label } : {}) };
}

export function uriPart(mimeType: string, uri: string): SentPart {
  return { type: 'uri', modality: modalityOf(mimeType), mime_type: mimeType, uri };
}

function imageParts(images: readonly ImageAttachment[] | undefined): SentPart[] {
  return (images ?? []).map((i) => blobPart(i.mediaType, i.data, i.label));
}

function reasoningPart(r: ReasoningBlock): SentPart {
  const meta = r.providerMetadata?.anthropic;
  return {
    type: GENAI_REASONING_PART,
    content: r.text,
    ...(meta && typeof meta.signature === 'string' ? { signed: true as const } : {}),
    ...(meta && meta.redactedData !== undefined ? { redacted: true as const } : {}),
  };
}

/** One of Runtrail's conversation messages in the GenAI shape. */
export function sentMessageOf(m: ChatMessage): SentMessage {
  switch (m.role) {
    case 'user':
      return { role: 'user', parts: [{ type: 'text', content: m.content }, ...imageParts(m.images)] };
    case 'assistant':
      return {
        role: 'assistant',
        parts: [
          ...(m.reasoning ?? []).map(reasoningPart),
          ...(m.content ? [{ type: 'text' as const, content: m.content }] : []),
          ...(m.toolCalls ?? []).map((c) => ({ type: 'tool_call' as const, id: c.id, name: c.name, arguments: c.args })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        parts: [
          { type: 'tool_call_response', id: m.toolCallId, name: m.toolName, response: m.content, ...(m.isError ? { is_error: true as const } : {}) },
          ...imageParts(m.images),
        ],
      };
  }
}

export interface ModelRequestSettings {
  model: string;
  reasoning?: ReasoningEffort;
  cacheKey?: string;
}

/** The settings of a request sent as Runtrail built it (no API adapter in between). */
export function plainSettings(s: ModelRequestSettings): SentSettings {
  return {
    model: s.model,
    temperature: null,
    max_output_tokens: null,
    reasoning: s.reasoning ?? 'off',
    cache_key: s.cacheKey ?? null,
    cache_breakpoints: [],
    provider_options: null,
  };
}
