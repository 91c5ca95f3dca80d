/**
 * The text of an API key: `rt_` + a 12-character key id + `_` + a 32-character secret + a 6-character
 * checksum, all base62. The prefix is what secret scanners match; the checksum (the first 32 bits of
 * SHA-256 of everything before it) lets a server refuse a mistyped or made-up key without looking it
 * up. What is stored is the SHA-256 of the whole key, never the key.
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_ID_LENGTH = 12;
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_SHAPE = new RegExp(`^rt_([0-9A-Za-z]{${KEY_ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);
const KEY_ID_SHAPE = new RegExp(`^[0-9A-Za-z]{${KEY_ID_LENGTH}}$`);

/** Random base62 text from the system's CSPRNG (randomInt draws without modulo bias). */
function randomBase62(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += BASE62[randomInt(62)];
  return s;
}

function checksumOf(body: string): string {
  let n = createHash('sha256').update(body).digest().readUInt32BE(0);
  let s = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    s = BASE62[n % 62] + s;
    n = Math.floor(n / 62);
  }
  return s;
}

export function newKeyId(): string {
  return randomBase62(KEY_ID_LENGTH);
}

export function isKeyId(v: unknown): v is string {
  return typeof v === 'string' && KEY_ID_SHAPE.test(v);
}

/** A new key of `keyId`, with a fresh secret. */
export function newApiKey(keyId: string): string {
  const body = `rt_${keyId}_${randomBase62(SECRET_LENGTH)}`;
  return body + checksumOf(body);
}

/** Whether `text` has the shape of a key at all (the `rt_` prefix): it is then judged as one, never as the server token. */
export function looksLikeApiKey(text: string): boolean {
  return text.startsWith('rt_');
}

/** The key id of a well-formed key whose checksum holds, else null (a typo, a truncation, a guess). */
export function parseApiKey(text: string): { keyId: string } | null {
  const m = KEY_SHAPE.exec(text);
  if (!m) return null;
  const body = text.slice(0, text.length - CHECKSUM_LENGTH);
  const sum = text.slice(-CHECKSUM_LENGTH);
  return timingSafeEqual(Buffer.from(checksumOf(body)), Buffer.from(sum)) ? { keyId: m[1] } : null;
}

/** What is stored for a key: hex SHA-256 of its whole text. */
export function keyHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Whether `text` hashes to `storedHex`, compared in constant time. */
export function keyHashMatches(text: string, storedHex: string): boolean {
  const given = createHash('sha256').update(text).digest();
  const stored = Buffer.from(storedHex, 'hex');
  return stored.length === given.length && timingSafeEqual(given, stored);
}
