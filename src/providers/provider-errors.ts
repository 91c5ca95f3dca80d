/**
 * Provider failures as Diagnosis data: every error a model call can hit maps to one code, and
 * the loop reads `retryable` to decide on recovery. Messages are scrubbed of keys.
 */
import type { DiagnosisInit } from '../events/diagnosis.js';

export const PROVIDER_ERROR_CODES = [
  'auth',
  'rate_limit',
  'overload',
  'context_length',
  'network',
  'bad_request',
  'provider_error',
  'aborted',
  'script_exhausted',
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

const RETRYABLE: ReadonlySet<string> = new Set(['rate_limit', 'overload', 'network']);

/** Whether a code is worth another try by default (rate limits, overloads, network trouble). */
export function isRetryableCode(code: string): boolean {
  return RETRYABLE.has(code);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const CONTEXT_LENGTH_RE =
  /context[_ ]length|maximum context|context window|context limit|prompt is too long|too many tokens|reduce the length of the messages|input is too long/i;

export interface ProviderErrorContext {
  provider: string;
  model: string;
  /** Env var that holds the key, named in auth hints. */
  keyEnvVar?: string;
  /** Values that must never appear in a message (API keys). */
  secrets?: string[];
}

/** Removes key material from text: the configured secrets and anything shaped like a bearer key. */
export function redactSecrets(text: string, secrets: string[] = []): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  }
  return out
    .replace(/\b(sk-[A-Za-z0-9_*-]{4,}|sk_[A-Za-z0-9_*-]{8,})/g, '[redacted]')
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=*-]+/gi, '$1[redacted]')
    .replace(/(x-api-key["':\s]+)[A-Za-z0-9._~+/=*-]{8,}/gi, '$1[redacted]');
}

interface ErrorFacts {
  status?: number;
  /** Provider's error type/code from the body, e.g. `overloaded_error`, `rate_limit_exceeded`. */
  kind?: string;
  message: string;
  networkCode?: string;
  retryAfter?: string;
  aborted: boolean;
}

/** Maps anything a model call threw or streamed as an error to a Diagnosis (never throws). */
export function diagnoseProviderError(error: unknown, ctx: ProviderErrorContext): DiagnosisInit {
  const f = collectFacts(error);
  const who = `${ctx.provider}:${ctx.model}`;
  const detail = redactSecrets(f.message, ctx.secrets).slice(0, 2000);
  const kind = (f.kind ?? '').toLowerCase();
  const mk = (code: ProviderErrorCode, summary: string, hint: string, retryable = isRetryableCode(code)): DiagnosisInit => ({
    code,
    severity: code === 'aborted' ? 'warning' : 'error',
    summary,
    detail,
    hint,
    retryable,
  });

  if (f.aborted) return mk('aborted', `Model call to ${who} was cancelled`, '', false);
  if (f.status === 401 || f.status === 403 || kind.includes('authentication') || kind.includes('permission') || kind === 'invalid_api_key') {
    const envHint = ctx.keyEnvVar ? `Check ${ctx.keyEnvVar}` : 'Check the API key';
    return mk('auth', `${who} rejected the credentials (HTTP ${f.status ?? '?'})`, `${envHint}: it must be a valid key with access to model ${ctx.model}.`);
  }
  if (kind === 'insufficient_quota') {
    return mk('rate_limit', `${who}: the account has no quota left`, 'Check the plan and billing of the account; retrying will not help.', false);
  }
  if (f.status === 429 || kind.includes('rate_limit')) {
    const after = f.retryAfter ? ` (retry-after: ${f.retryAfter}s)` : '';
    return mk('rate_limit', `${who} is rate limiting requests${after}`, 'Wait and retry, or lower the request rate.');
  }
  if (f.status === 503 || f.status === 529 || kind.includes('overloaded')) {
    return mk('overload', `${who} is overloaded (HTTP ${f.status ?? '?'})`, 'Retry later.');
  }
  if (CONTEXT_LENGTH_RE.test(f.message) || kind.includes('context_length')) {
    return mk('context_length', `The conversation is too long for ${who}`, 'Shorten the input or use a model with a larger context window.', false);
  }
  if (f.networkCode || (f.status === undefined && /cannot connect|fetch failed|network|socket/i.test(f.message))) {
    const lost = f.networkCode === 'ECONNRESET' || f.networkCode === 'UND_ERR_SOCKET' || f.networkCode === 'EPIPE';
    const code = f.networkCode ? ` (${f.networkCode})` : '';
    return lost
      ? mk('network', `Lost the connection to ${who}${code}`, 'A network failure; retrying may help.')
      : mk('network', `Cannot reach ${who}${code}`, 'Check the base URL and that the server is running.');
  }
  if (f.status !== undefined && f.status >= 400 && f.status < 500) {
    return mk('bad_request', `${who} rejected the request (HTTP ${f.status})`, 'The model or its parameters may be wrong for this provider.', false);
  }
  const transient = f.status !== undefined && f.status >= 500;
  return mk('provider_error', `${who} failed${f.status ? ` (HTTP ${f.status})` : ''}`, transient ? 'A server error; retrying may help.' : '', transient);
}

function collectFacts(error: unknown): ErrorFacts {
  const facts: ErrorFacts = { message: '', aborted: false };
  const seen = new Set<unknown>();
  let cur: unknown = error;
  // Walk the cause chain (RetryError.lastError, APICallError.cause, undici's cause) for the facts.
  while (cur != null && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur);
    const e = cur as Record<string, unknown>;
    if (!facts.message) facts.message = bodyMessage(e.responseBody) ?? errMessage(e);
    if (facts.status === undefined && typeof e.statusCode === 'number') facts.status = e.statusCode;
    if (facts.status === undefined && typeof e.status === 'number') facts.status = e.status;
    if (facts.kind === undefined) facts.kind = bodyKind(e.responseBody) ?? dataKind(e.data) ?? dataKind(e.error) ?? dataKind(e);
    if (!facts.networkCode && typeof e.code === 'string' && NETWORK_CODES.has(e.code)) facts.networkCode = e.code;
    if (!facts.retryAfter && e.responseHeaders && typeof e.responseHeaders === 'object') {
      const ra = (e.responseHeaders as Record<string, string>)['retry-after'];
      if (ra) facts.retryAfter = ra;
    }
    if (e.name === 'AbortError') facts.aborted = true;
    cur = e.lastError ?? e.cause ?? (typeof e.error === 'object' ? e.error : undefined);
  }
  if (typeof error === 'string') facts.message = error;
  if (!facts.message) facts.message = 'unknown error';
  return facts;
}

function errMessage(e: Record<string, unknown>): string {
  if (typeof e.message === 'string' && e.message) return e.message;
  const inner = e.error;
  if (inner && typeof inner === 'object' && typeof (inner as Record<string, unknown>).message === 'string') {
    return (inner as Record<string, string>).message;
  }
  return '';
}

function parseBody(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(body);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** OpenAI-style `{error:{message,type,code}}` and Anthropic-style `{type:'error',error:{type,message}}`. */
function bodyMessage(body: unknown): string | undefined {
  const o = parseBody(body);
  const err = o?.error;
  if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string') {
    return (err as Record<string, string>).message;
  }
  return typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : undefined;
}

function bodyKind(body: unknown): string | undefined {
  return dataKind(parseBody(body));
}

function dataKind(data: unknown): string | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const o = data as Record<string, unknown>;
  const err = o.error && typeof o.error === 'object' ? (o.error as Record<string, unknown>) : undefined;
  const candidates = [err?.code, err?.type, o.code, o.type !== 'error' ? o.type : undefined];
  for (const c of candidates) if (typeof c === 'string' && c) return c;
  return undefined;
}
