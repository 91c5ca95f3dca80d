/** Our ChatMessage/ToolSpec shapes to the AI SDK's ModelMessage/ToolSet, per provider API. */
import type { JSONSchema7, ModelMessage, SystemModelMessage, ToolResultPart, ToolSet, jsonSchema } from 'ai';
import type { SharedV3ProviderOptions as ProviderOptions } from '@ai-sdk/provider';
import { IMAGE_MEDIA_TYPES, type ChatMessage, type ImageAttachment, type ProviderMetadata, type ToolSpec } from './model-provider.js';

/** The wire dialect a provider speaks; decides how reasoning, images and cache breakpoints travel. */
export type ModelApi = 'anthropic' | 'openai' | 'deepseek' | 'openai-compatible' | 'generic';

export interface MappingOptions {
  api?: ModelApi;
  /** The model reads images; otherwise each image becomes a short text saying it was withheld. */
  vision?: boolean;
  /** Anthropic: mark the newest message as a cache breakpoint. */
  cache?: boolean;
  /** Named in the withheld-image text, e.g. `deepseek:deepseek-chat`. */
  modelLabel?: string;
}

/** Anthropic's limit for one image (OpenAI's is larger); a bigger one is withheld, not sent to fail. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export const EPHEMERAL_CACHE: ProviderOptions = { anthropic: { cacheControl: { type: 'ephemeral' } } };

/** Only Anthropic needs reasoning back: the signed thinking blocks of the turns that called tools. */
function replaysReasoning(api: ModelApi): boolean {
  return api === 'anthropic';
}

function imageBytes(img: ImageAttachment): number {
  const pad = img.data.endsWith('==') ? 2 : img.data.endsWith('=') ? 1 : 0;
  return Math.floor((img.data.length * 3) / 4) - pad;
}

/** Why an image cannot be sent as an image, or null when it can. */
function withheldReason(img: ImageAttachment, opts: MappingOptions): string | null {
  if (!opts.vision) return `${opts.modelLabel ?? 'this model'} does not take image input`;
  if (!(IMAGE_MEDIA_TYPES as readonly string[]).includes(img.mediaType)) return `${img.mediaType} is not an image type models read (png, jpeg, gif, webp)`;
  if (imageBytes(img) > MAX_IMAGE_BYTES) return `it is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB`;
  return null;
}

function withheldText(img: ImageAttachment, reason: string): string {
  const kb = Math.max(1, Math.round(imageBytes(img) / 1024));
  return `[image withheld: ${img.label ?? img.mediaType} (${img.mediaType}, ${kb} KB): ${reason}]`;
}

/** Splits images into those sent as images and a text line for each one withheld. */
function sortImages(images: readonly ImageAttachment[] | undefined, opts: MappingOptions): { sent: ImageAttachment[]; notes: string[] } {
  const sent: ImageAttachment[] = [];
  const notes: string[] = [];
  for (const img of images ?? []) {
    const reason = withheldReason(img, opts);
    if (reason) notes.push(withheldText(img, reason));
    else sent.push(img);
  }
  return { sent, notes };
}

function withNotes(text: string, notes: string[]): string {
  return notes.length ? [text, ...notes].filter(Boolean).join('\n') : text;
}

/** The AI SDK's reasoning content part (not a wire frame: named so the wire-literal sentinel can tell). */
const SDK_REASONING_PART = 'reasoning' as const;

// ProviderMetadata values are JSON (they came from the SDK); the SDK's type says JSONValue.
const asProviderOptions = (m: ProviderMetadata): ProviderOptions => m as ProviderOptions;

/**
 * Assistant tool calls become tool-call parts; consecutive tool results become one tool message
 * (providers such as Anthropic want all results of a batch together). Empty assistant turns are
 * dropped: several APIs reject empty content blocks. Reasoning goes back only where the API wants
 * it (Anthropic, turns with tool calls, signed blocks only); images go as image parts to models
 * that read them: inside the tool result for Anthropic, in a user message after the batch for
 * chat-completions APIs (whose tool messages hold text only).
 */
export function toModelMessages(messages: readonly ChatMessage[], opts: MappingOptions = {}): ModelMessage[] {
  const api = opts.api ?? 'generic';
  const out: ModelMessage[] = [];
  let pendingImages: Array<{ from: string; images: ImageAttachment[] }> = [];
  const flushImages = () => {
    if (!pendingImages.length) return;
    out.push({
      role: 'user',
      content: pendingImages.flatMap((p) => [
        { type: 'text' as const, text: `Image${p.images.length > 1 ? 's' : ''} returned by ${p.from}:` },
        ...p.images.map((img) => ({ type: 'image' as const, image: img.data, mediaType: img.mediaType })),
      ]),
    });
    pendingImages = [];
  };

  for (const m of messages) {
    if (m.role !== 'tool') flushImages();
    if (m.role === 'user') {
      const { sent, notes } = sortImages(m.images, opts);
      const text = withNotes(m.content, notes);
      if (!sent.length) out.push({ role: 'user', content: text });
      else
        out.push({
          role: 'user',
          content: [{ type: 'text', text }, ...sent.map((img) => ({ type: 'image' as const, image: img.data, mediaType: img.mediaType }))],
        });
    } else if (m.role === 'assistant') {
      const calls = m.toolCalls ?? [];
      if (calls.length === 0) {
        if (m.content) out.push({ role: 'assistant', content: m.content });
        continue;
      }
      const reasoning = replaysReasoning(api) ? (m.reasoning ?? []).filter((r) => r.providerMetadata && Object.keys(r.providerMetadata).length) : [];
      out.push({
        role: 'assistant',
        content: [
          ...reasoning.map((r) => ({ type: SDK_REASONING_PART, text: r.text, providerOptions: asProviderOptions(r.providerMetadata!) })),
          ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
          ...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.args ?? {} })),
        ],
      });
    } else {
      const { sent, notes } = m.isError ? { sent: [], notes: [] } : sortImages(m.images, opts);
      let output: ToolResultPart['output'];
      if (m.isError) output = { type: 'error-text', value: m.content };
      else if (!sent.length) output = { type: 'text', value: withNotes(m.content, notes) };
      else if (api === 'anthropic' || api === 'generic') {
        output = {
          type: 'content',
          value: [
            { type: 'text', text: withNotes(m.content, notes) },
            ...sent.map((img) => ({ type: 'image-data' as const, data: img.data, mediaType: img.mediaType })),
          ],
        };
      } else {
        output = { type: 'text', value: withNotes(m.content, [...notes, `[${sent.length} image${sent.length > 1 ? 's' : ''} attached in the next message]`]) };
        pendingImages.push({ from: `${m.toolName} (${m.toolCallId})`, images: sent });
      }
      const part = { type: 'tool-result' as const, toolCallId: m.toolCallId, toolName: m.toolName, output };
      const last = out[out.length - 1];
      if (last && last.role === 'tool') last.content.push(part);
      else out.push({ role: 'tool', content: [part] });
    }
  }
  flushImages();
  if (opts.cache && api === 'anthropic' && out.length) {
    const last = out[out.length - 1]!;
    last.providerOptions = EPHEMERAL_CACHE;
  }
  return out;
}

/** The system prompt; for Anthropic with caching, a breakpoint after it (tools + system are the stable prefix). */
export function toSystem(system: string, opts: MappingOptions = {}): string | SystemModelMessage | undefined {
  if (!system) return undefined;
  if (opts.cache && opts.api === 'anthropic') return { role: 'system', content: system, providerOptions: EPHEMERAL_CACHE };
  return system;
}

/**
 * Tools as JSON Schema and without `execute`: the runtime's executor runs them, the model only asks.
 * In the order given (the executor's registration order), so the request prefix stays identical
 * turn to turn; for Anthropic with caching the last tool carries a cache breakpoint.
 */
export function toToolSet(tools: readonly ToolSpec[], opts: MappingOptions = {}, schema: typeof jsonSchema): ToolSet {
  const set: ToolSet = {};
  tools.forEach((t, i) => {
    const last = i === tools.length - 1 && opts.cache && opts.api === 'anthropic';
    // a plain tool object: the SDK's tool() is the identity (and the SDK is loaded only to stream)
    set[t.name] = {
      description: t.description,
      inputSchema: schema(t.inputSchema as JSONSchema7),
      ...(last ? { providerOptions: EPHEMERAL_CACHE } : {}),
    };
  });
  return set;
}
