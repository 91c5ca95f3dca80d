/** The contract between the agent loop and any model: a stream of parts, errors carried as data. */
import type { DiagnosisInit } from '../events/diagnosis.js';

export interface ToolCallRequest {
  id: string;
  name: string;
  args: unknown;
}

export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallRequest[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError: boolean };

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
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export type ModelStreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; args: unknown }
  | { type: 'finish'; reason: 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'other'; usage?: TokenUsage }
  /** A failed call; `diagnosis.retryable` tells the loop whether to try again. */
  | { type: 'error'; diagnosis: DiagnosisInit };

export interface ModelProvider {
  /** e.g. 'openai', 'offline', 'script' */
  readonly provider: string;
  readonly model: string;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
