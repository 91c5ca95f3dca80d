/** The contract between the agent loop and any model: a stream of parts, errors carried as data. */
import type { DiagnosisInit } from '../events/diagnosis.js';

export interface ToolCallRequest {
  id: string;
  name: string;
  args: unknown;
}

/** How hard the model thinks before answering; each provider maps it to its own option. */
export const REASONING_EFFORTS = ['off', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/**
 * Provider data carried with a part, in the AI SDK's ProviderMetadata shape (provider name →
 * JSON object), e.g. `{ anthropic: { signature } }` on a thinking block. Sent back untouched.
 */
export type ProviderMetadata = Record<string, Record<string, unknown>>;

/** One reasoning block of an assistant turn, as the provider produced it. */
export interface ReasoningBlock {
  /** The visible thinking text ('' for Anthropic's redacted thinking). */
  text: string;
  /** Anthropic: `{ anthropic: { signature } }` or `{ anthropic: { redactedData } }`. */
  providerMetadata?: ProviderMetadata;
}

export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

/**
 * An image that reaches the model (a tool result, an uploaded input). The same shape as
 * `ToolImage` in tools/tool.ts (tools may not import providers), so either fits the other.
 */
export interface ImageAttachment {
  mediaType: string;
  /** base64, without a `data:` prefix */
  data: string;
  /** What it is, for the text that replaces it when a model cannot see images (e.g. a file name). */
  label?: string;
}

export type ChatMessage =
  | { role: 'user'; content: string; images?: ImageAttachment[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallRequest[]; reasoning?: ReasoningBlock[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError: boolean; images?: ImageAttachment[] };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (from z.toJSONSchema). */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal?: AbortSignal;
  /** Reasoning effort for this call; 'off' (or absent) asks for none. */
  reasoning?: ReasoningEffort;
  /** Stable for the whole run: providers that route prompt caches by key (OpenAI) get it. */
  cacheKey?: string;
  /** Overrides the catalog's context window (`limits.context_tokens`). */
  contextTokens?: number;
  /** A compaction request: the turns to summarise (`messages` holds their transcript). Models that
   *  replay or reason deterministically (offline, script) summarise these instead of the transcript. */
  summaryOf?: ChatMessage[];
  /** Yield a `request` part: the request as the model's API adapter received it (the model-call record asks). */
  reportRequest?: boolean;
}

export interface TokenUsage {
  /** All input tokens, cached ones included. */
  inputTokens: number;
  /** All output tokens, reasoning included. */
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** Input tokens written to the prompt cache (Anthropic charges them at a premium). */
  cacheWriteTokens?: number;
  /** Output tokens spent on reasoning. */
  reasoningTokens?: number;
}

/*
 * A model call's request as the model received it: the system prompt, the messages with their roles
 * and parts, the tools and the settings. Parts follow the OpenTelemetry GenAI message conventions
 * (`text`, `reasoning`, `tool_call`, `tool_call_response`, `blob`, `file`, `uri`), so the same shape
 * serves the run's model-call record and the spans' `gen_ai.input.messages`.
 */
export type Modality = 'image' | 'video' | 'audio' | 'file';

/** A GenAI message part's type for the model's thinking (not a wire frame: named so the wire-literal sentinel can tell). */
export const GENAI_REASONING_PART = 'reasoning' as const;

export type SentPart =
  | { type: 'text'; content: string }
  /** `signed`: the provider's signature travels with it; `redacted`: the provider sent it encrypted. */
  | { type: typeof GENAI_REASONING_PART; content: string; signed?: true; redacted?: true }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; name: string; response: unknown; is_error?: true }
  /** Inline data (base64): what a provider sends; a record keeps it as a `file` part instead. */
  | { type: 'blob'; modality: Modality; mime_type: string; content: string; label?: string }
  /** A file of the run folder (`file_id` is its path there), e.g. an image the model was shown. */
  | { type: 'file'; modality: Modality; mime_type: string; file_id: string; bytes: number; label?: string }
  | { type: 'uri'; modality: Modality; mime_type: string; uri: string };

export interface SentMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: SentPart[];
  /** A prompt-cache breakpoint after this message (Anthropic's `cache_control`). */
  cache?: 'ephemeral';
}

export interface SentSettings {
  /** provider:model */
  model: string;
  temperature: number | null;
  max_output_tokens: number | null;
  reasoning: ReasoningEffort;
  /** The prompt-cache key (OpenAI routes caches by it). */
  cache_key: string | null;
  /** Where the prompt-cache breakpoints sit: `tools`, `system`, `messages[3]`. */
  cache_breakpoints: string[];
  /** The provider-specific options sent (reasoning budgets, cache keys), as the API adapter got them. */
  provider_options: Record<string, unknown> | null;
  /** The settings of the body the API received (its top level without messages, system and tools). */
  api?: Record<string, unknown>;
}

export interface SentRequest {
  /** `api`: taken from the call the model's API adapter received; `model_request`: the request Runtrail
   *  handed the provider (local models, and calls refused before they were sent). */
  source: 'api' | 'model_request';
  system: string;
  messages: SentMessage[];
  tools: ToolSpec[];
  settings: SentSettings;
}

export type ModelStreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  /** A finished reasoning block with its provider metadata, after its deltas: kept in the conversation. */
  | { type: 'reasoning-block'; block: ReasoningBlock }
  | { type: 'tool-call'; id: string; name: string; args: unknown }
  | { type: 'finish'; reason: 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'other'; usage?: TokenUsage }
  /** What the model's API adapter received, once, before any output (only when `reportRequest` asked). */
  | { type: 'request'; request: SentRequest }
  /** Something the run should be told that does not stop the call (a setting the model ignores). */
  | { type: 'notice'; text: string }
  /** A failed call; `diagnosis.retryable` tells the loop whether to try again. */
  | { type: 'error'; diagnosis: DiagnosisInit };

export interface ModelProvider {
  /** e.g. 'openai', 'offline', 'script' */
  readonly provider: string;
  readonly model: string;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
  /** A model with state of its own (a script's next turn, the ids it numbers calls with): what a run's
   *  checkpoint keeps, so a resumed run goes on where it was. Plain JSON. */
  position?(): unknown;
  restorePosition?(position: unknown): void;
}
