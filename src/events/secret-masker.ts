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
 * encoded text, so `Basic base64(user:secret)` is caught too, padded or not), its hex digits (either
 * case, bytes together or apart), its URL-encoded and its JSON-escaped forms with `[redacted]`
 * (secret-forms.ts) — also when line wraps break the form (wrapped-text.ts). Code that writes a new kind of file or sends text somewhere new passes it
 * through one of those two, or through `maskSecretValues` (secret-values.ts), which applies these
 * values and the credential-shaped patterns.
 *
 * Limits, said plainly: a value shorter than MIN_SECRET_LENGTH is not registered (masking "1234"
 * everywhere would mangle text and hide nothing); a secret split across two streamed deltas is masked
 * in the message's full text but each delta holds only a part, unless the stream goes through a
 * StreamMasker (stream-masker.ts); object keys are not masked; a form broken by something other than
 * a line wrap (a hex dump's offsets and ASCII column, quotes and `+` of a string split in source code)
 * or transformed further (reversed, encoded twice, UTF-16) is not recognised.
 */

import { escapeRegExp, hexFormSource, secretForms } from './secret-forms.js';
import { unwrap } from './wrapped-text.js';

export const SECRET_MASK = '[redacted]';

/** A value shorter than this is not masked (it would match ordinary text). */
export const MIN_SECRET_LENGTH = 8;

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
  /** The literal forms and the lower-case hex of every value, for matching the ends of a cut text. */
  private plainForms: string[] = [];
  private longest = 0;
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
    const values = [...this.values.keys()];
    const forms = [...new Set(values.flatMap(secretForms))].sort((a, b) => b.length - a.length);
    // hex forms last: a hex digit run is never a prefix of a longer literal form that must win
    const source = [...forms.map(escapeRegExp), ...values.map(hexFormSource)].join('|');
    this.finder = new RegExp(source);
    this.replacer = new RegExp(source, 'g');
    this.shortest = Math.min(...forms.map((f) => f.length));
    this.plainForms = [...forms, ...values.map((v) => Buffer.from(v, 'utf8').toString('hex'))];
    this.longest = Math.max(...this.plainForms.map((f) => f.length));
    this.changes++;
    return true;
  }

  /** `text` with every registered value (in any of its forms) replaced by `[redacted]`. */
  mask(text: string): string {
    if (text.length < this.shortest || this.finder === null) return text;
    let out = text;
    if (this.finder.test(out)) {
      this.replacer!.lastIndex = 0;
      out = out.replace(this.replacer!, SECRET_MASK);
    }
    return this.maskAcrossWraps(out);
  }

  /**
   * A form broken by line wraps (base64 at 76 columns, PEM at 64, hex from `xxd -p`, a JSON string's
   * `\n`): matched in the text without its wraps, masked in the text as written, the wraps inside
   * the form going with it.
   */
  private maskAcrossWraps(text: string): string {
    const u = unwrap(text);
    if (u === null || u.text.length < this.shortest || !this.finder!.test(u.text)) return text;
    const re = this.replacer!;
    let out = '';
    let from = 0;
    re.lastIndex = 0;
    for (let m = re.exec(u.text); m !== null; m = re.exec(u.text)) {
      const [start, end] = u.original(m.index, m.index + m[0].length);
      if (start < from) continue;
      out += text.slice(from, start) + SECRET_MASK;
      from = end;
    }
    return out + text.slice(from);
  }

  /** The longest form (in characters, without wraps): what a stream keeps to match across its chunks. */
  get longestForm(): number {
    return this.longest;
  }

  /**
   * The ranges [start, end) of `text` that `mask` replaces, in order and not overlapping: for a caller
   * that masks part of a text and must know where (a stream masking a chunk in the light of the text
   * before it).
   */
  spans(text: string): Array<[number, number]> {
    if (text.length < this.shortest || this.finder === null) return [];
    const found: Array<[number, number]> = [];
    const re = this.replacer!;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) found.push([m.index, m.index + m[0].length]);
    const u = unwrap(text);
    if (u !== null) {
      re.lastIndex = 0;
      for (let m = re.exec(u.text); m !== null; m = re.exec(u.text)) found.push(u.original(m.index, m.index + m[0].length));
    }
    found.sort((a, b) => a[0] - b[0]);
    const merged: Array<[number, number]> = [];
    for (const [a, b] of found) {
      const last = merged[merged.length - 1];
      if (last && a <= last[1]) last[1] = Math.max(last[1], b);
      else merged.push([a, b]);
    }
    return merged;
  }

  /**
   * Where, at the end of `text`, a form may be starting (its first `minChars` or more characters,
   * wraps aside, hex in either case): the index to hold the text back from until more comes, or
   * `text.length` when nothing there starts a form.
   */
  formStartAt(text: string, minChars = 1): number {
    if (this.longest === 0) return text.length;
    // a wrapped form is longer than its characters: look back far enough for wraps between them all
    const from = Math.max(0, text.length - 4 * this.longest);
    const tail = text.slice(from);
    const u = unwrap(tail);
    const joined = u?.text ?? tail;
    const lower = joined.toLowerCase();
    for (let j = Math.max(0, joined.length - this.longest); j <= joined.length - minChars; j++) {
      const part = joined.slice(j);
      const partLower = lower.slice(j);
      if (this.plainForms.some((f) => f.startsWith(part) || (/^[0-9a-f]+$/.test(f) && f.startsWith(partLower)))) {
        return from + (u ? u.original(j, j + 1)[0] : j);
      }
    }
    return text.length;
  }

  /**
   * `text` masked as the tail of something longer that was cut off before it: a form's last
   * `minChars` or more characters at its very start are masked too (the rest of that form is gone).
   */
  maskCutFront(text: string, minChars = 4): string {
    const masked = this.mask(text);
    if (this.longest === 0) return masked;
    const head = masked.slice(0, 4 * this.longest);
    const u = unwrap(head);
    const joined = u?.text ?? head;
    const lower = joined.toLowerCase();
    for (let k = Math.min(joined.length, this.longest - 1); k >= minChars; k--) {
      const part = joined.slice(0, k);
      const partLower = lower.slice(0, k);
      if (this.plainForms.some((f) => f.endsWith(part) || (/^[0-9a-f]+$/.test(f) && f.endsWith(partLower)))) {
        const end = u ? u.original(0, k)[1] : k;
        return SECRET_MASK + masked.slice(end);
      }
    }
    return masked;
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
