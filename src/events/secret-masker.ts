/**
 * The values of the server's own secrets (its API token, provider keys, the values expanded into MCP
 * servers' env/headers/args, a chat channel's bot token, a webhook's signing secret), masked in
 * everything Runtrail writes or sends: every event on a run's bus (so events.jsonl, SSE/WebSocket
 * frames, replay, trace.jsonl, IM replies), the run folder's own files and artifacts, what a model is
 * sent, HTTP responses, the server's logs and the CLI's output.
 *
 * One process-wide set: whoever holds a secret registers it once, at the moment it is read —
 *
 *     import { registerSecret } from '…/events/secret-masker.js';
 *     registerSecret(process.env.TELEGRAM_BOT_TOKEN, 'TELEGRAM_BOT_TOKEN');
 *
 * — and from then on `maskSecrets(text)` (one string) and `maskSecretsDeep(value)` (every string in a
 * JSON-like value) replace it, its base64 and base64url forms (at any alignment inside a longer
 * encoded text, so `Basic base64(user:secret)` is caught too), its URL-encoded and its JSON-escaped
 * forms with `[redacted]`. Code that writes a new kind of file or sends text somewhere new passes it
 * through one of those two, or through `maskSecretValues` (secret-values.ts), which applies these
 * values and the credential-shaped patterns.
 *
 * Limits, said plainly: a value shorter than MIN_SECRET_LENGTH is not registered (masking "1234"
 * everywhere would mangle text and hide nothing); a secret split across two streamed deltas is masked
 * in the message's full text but each delta holds only a part; object keys are not masked.
 */

export const SECRET_MASK = '[redacted]';

/** A value shorter than this is not masked (it would match ordinary text). */
export const MIN_SECRET_LENGTH = 8;

/** An encoded form shorter than this is not masked. */
const MIN_FORM_LENGTH = 8;

const STANDARD = /[+/]/g;

function base64UrlOf(b64: string): string {
  return b64.replace(STANDARD, (c) => (c === '+' ? '-' : '_')).replace(/=+$/, '');
}

/**
 * The base64 text a value becomes inside any base64 text, at each of the three byte alignments: the
 * characters that depend on the value's bytes alone (the partial groups at both ends depend on the
 * bytes around it and are left out).
 */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out = [bytes.toString('base64')];
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const start = [0, 2, 3][k];
    const end = 4 * Math.floor((k + bytes.length) / 3);
    if (end - start >= MIN_FORM_LENGTH) out.push(enc.slice(start, end));
  }
  return out;
}

/** Every form of `value` that is masked, longest first. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(uri.replace(/%20/g, '+'));
  forms.add(JSON.stringify(value).slice(1, -1));
  for (const b64 of base64Cores(value)) {
    forms.add(b64);
    forms.add(base64UrlOf(b64));
  }
  return [...forms].filter((f) => f.length >= MIN_FORM_LENGTH).sort((a, b) => b.length - a.length);
}

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

function isPlainContainer(v: object): boolean {
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** What replaces a value nested too deep to walk (a cycle is not one: it is skipped). */
const TOO_DEEP = '[redacted: nested too deep to check for secrets]';
const MAX_DEPTH = 1_000;

export class SecretMasker {
  private readonly values = new Map<string, string>();
  /** Matches any form (no `g`: a test); `replacer` is the same with `g`. */
  private finder: RegExp | null = null;
  private replacer: RegExp | null = null;
  private shortest = Infinity;
  private changes = 0;

  /** How many values are registered. */
  get size(): number {
    return this.values.size;
  }

  /** Bumped by each new value: a cache of masked text is stale once it changes. */
  get version(): number {
    return this.changes;
  }

  /** The names given to the registered values (never the values), for diagnostics. */
  labels(): string[] {
    return [...new Set(this.values.values())].sort();
  }

  /**
   * Masks `value` from now on. Returns false (and masks nothing) for a value that is not a string or
   * is shorter than MIN_SECRET_LENGTH; registering a value twice is harmless.
   */
  register(value: unknown, label = 'secret'): boolean {
    if (typeof value !== 'string') return false;
    const v = value.trim();
    if (v.length < MIN_SECRET_LENGTH) return false;
    if (this.values.has(v)) return true;
    this.values.set(v, label);
    const forms = [...new Set([...this.values.keys()].flatMap(secretForms))].sort((a, b) => b.length - a.length);
    const source = forms.map(escapeRegExp).join('|');
    this.finder = new RegExp(source);
    this.replacer = new RegExp(source, 'g');
    this.shortest = Math.min(...forms.map((f) => f.length));
    this.changes++;
    return true;
  }

  /** `text` with every registered value (in any of its forms) replaced by `[redacted]`. */
  mask(text: string): string {
    if (text.length < this.shortest || this.finder === null || !this.finder.test(text)) return text;
    this.replacer!.lastIndex = 0;
    return text.replace(this.replacer!, SECRET_MASK);
  }

  /** Every string inside a JSON-like value masked (see mapStrings): `value` itself when nothing changed. */
  maskDeep<T>(value: T): T {
    if (this.finder === null) return value;
    return mapStrings(value, this.maskText);
  }

  private readonly maskText = (text: string): string => this.mask(text);
}

/**
 * `value` with `fn` applied to every string inside it (plain objects and arrays, at any depth): the
 * value itself when nothing changed, else a copy of the changed path (the caller's value is never
 * modified). Class instances other than arrays pass through as they are; a cycle is walked once; a
 * value nested deeper than MAX_DEPTH is replaced (it cannot be checked).
 */
export function mapStrings<T>(value: T, fn: (text: string) => string): T {
  return walk(value, fn, 0, null) as T;
}

function walk(v: unknown, fn: (text: string) => string, depth: number, seen: Set<object> | null): unknown {
  if (typeof v === 'string') return fn(v);
  if (v === null || typeof v !== 'object' || !isPlainContainer(v)) return v;
  if (depth > MAX_DEPTH) return TOO_DEEP;
  // the top level needs no cycle check (a flat event's data): a set is made at the first nesting
  if (depth > 0) {
    seen ??= new Set();
    if (seen.has(v)) return v;
    seen.add(v);
  }
  let out: unknown[] | Record<string, unknown> | null = null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const m = walk(v[i], fn, depth + 1, seen);
      if (m !== v[i]) {
        out ??= v.slice();
        (out as unknown[])[i] = m;
      }
    }
  } else {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const m = walk(o[k], fn, depth + 1, seen);
      if (m !== o[k]) {
        out ??= { ...o };
        (out as Record<string, unknown>)[k] = m;
      }
    }
  }
  seen?.delete(v);
  return out ?? v;
}

/** The process's secrets: one set for every run, log and response of this process. */
export const serverSecrets = new SecretMasker();

/** Masks `value` (and its encoded forms) everywhere from now on; false when it is too short to mask. */
export function registerSecret(value: unknown, label?: string): boolean {
  return serverSecrets.register(value, label);
}

/** `text` with the server's secrets masked. */
export function maskSecrets(text: string): string {
  return serverSecrets.mask(text);
}

/** Every string inside `value` with the server's secrets masked (a copy where anything changed). */
export function maskSecretsDeep<T>(value: T): T {
  return serverSecrets.maskDeep(value);
}

/** Name segments that say an environment variable holds a secret (`OPENAI_API_KEY`, `DB_PASSWORD`). */
const SECRET_NAME_PARTS = new Set([
  'KEY',
  'APIKEY',
  'TOKEN',
  'SECRET',
  'SECRETS',
  'PASSWORD',
  'PASSWD',
  'PASS',
  'PASSPHRASE',
  'PWD',
  'CREDENTIAL',
  'CREDENTIALS',
  'AUTH',
  'COOKIE',
  'PAT',
]);
/** …unless the name says it holds where something is, or what it is called. */
const LOCATION_NAME_PARTS = new Set(['PATH', 'FILE', 'DIR', 'URL', 'URI', 'HOST', 'ENDPOINT', 'ID', 'NAME', 'SOCK', 'TYPE', 'MODE', 'HEADER']);
/** The shell's working directories: paths, whatever their names say. */
const NOT_SECRETS = new Set(['PWD', 'OLDPWD']);

/** Whether an environment variable's name says it holds a secret. */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRETS.has(upper)) return false;
  const parts = upper.split(/[^A-Z0-9]+/).filter(Boolean);
  if (parts.length && LOCATION_NAME_PARTS.has(parts[parts.length - 1])) return false;
  return parts.some((p) => SECRET_NAME_PARTS.has(p)) || /API_?KEY|SECRET|PASSWORD|TOKEN/.test(upper.replace(/[^A-Z0-9_]/g, '_'));
}

/**
 * Whether a value could be a secret rather than a setting: long enough, not a number or a boolean, not a
 * path, not a plain URL (a URL's password is taken separately by `secretsOfEnv`).
 */
export function isPlausibleSecret(value: string): boolean {
  const v = value.trim();
  if (v.length < MIN_SECRET_LENGTH) return false;
  if (/^[0-9.]+$/.test(v) || /^(true|false|yes|no|on|off|null|none)$/i.test(v)) return false;
  if (/^(\/|~\/|\.\.?\/)[^\s]*$/.test(v) && !/[+=]/.test(v)) return false;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^\s@]*$/i.test(v) && !v.includes('?')) return false;
  return true;
}

/** The password of a URL with credentials (`postgres://user:pw@host/db`), or null. */
function urlPassword(value: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*:([^\s@/?#]+)@/i.exec(value.trim());
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

/** The secrets an environment holds: values of variables named like secrets, and URL passwords. */
export function secretsOfEnv(env: Record<string, string | undefined>): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string' || !value) continue;
    if (isSecretEnvName(name) && isPlausibleSecret(value)) out.push({ name, value });
    const pw = urlPassword(value);
    if (pw) out.push({ name: `${name} (password)`, value: pw });
  }
  return out;
}

/** Registers the secrets of an environment (see secretsOfEnv); returns the names of those masked. */
export function registerEnvSecrets(env: Record<string, string | undefined>, masker: SecretMasker = serverSecrets): string[] {
  return secretsOfEnv(env).flatMap((s) => (masker.register(s.value, s.name) ? [s.name] : []));
}
