/** The page talks to the server over HTTP only; a token (if the server has one) lives in localStorage. */
import type { Diagnosis } from './wire-types.js';
export type { Diagnosis } from './wire-types.js';

export const TOKEN_KEY = 'runtrail_token';

export function token(): string {
  return localStorage.getItem(TOKEN_KEY) ?? '';
}

export function authHeaders(): Record<string, string> {
  const t = token();
  return t ? { authorization: `Bearer ${t}` } : {};
}

/** For links the browser fetches itself (downloads): the server also takes ?access_token= on GET. */
export function withToken(url: string): string {
  const t = token();
  return t ? `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(t)}` : url;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(), ...(init.headers as Record<string, string> | undefined) };
  if (init.body && typeof init.body === 'string') headers['content-type'] = 'application/json';
  const res = await fetch(path, { ...init, headers });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;
    throw new ApiError(res.status, e?.code ?? 'http_error', e?.message ?? `${res.status} ${res.statusText}`, e?.details ?? {});
  }
  return body as T;
}

export async function apiText(path: string): Promise<string> {
  const res = await fetch(path, { headers: authHeaders() });
  if (!res.ok) throw new ApiError(res.status, 'http_error', `${res.status} ${res.statusText}`);
  return res.text();
}

export interface PublicDocument {
  path: string;
  audience: string;
  sensitivity: string;
  type: string;
  description: string;
  bytes: number;
}

export interface RunStatus {
  run_id: string;
  status: string;
  plugin: string;
  goal: string;
  conversation_id: string;
  provider: string;
  model: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  final_answer: string;
  diagnosis: Diagnosis | null;
  last_seq: number;
  public_documents: PublicDocument[];
  parent_run_id?: string;
  children?: string[];
  /** a run a schedule started */
  trigger?: { type: 'schedule'; schedule_id: string; fire_time: string };
  /** the runs list's figures (GET /api/runs) */
  usage?: { duration_ms: number | null; tokens: number | null; cost_usd: number | null; model_calls: number | null };
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
}

export interface PluginInfo {
  name: string;
  version: string;
  description: string;
  defaultGoal: string;
  fileInputs: string[];
  inputSchema: JsonSchema;
  /** builtin, or the user's / project's file (or package) it comes from */
  source: { kind: string; file?: string };
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
