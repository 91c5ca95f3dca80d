/**
 * The forms a secret value takes in text, as one regular-expression source each: the value itself,
 * its URL-encoded and JSON-escaped forms, its base64 and base64url text at each of the three byte
 * alignments inside a longer encoded text (padded or not), and its hex digits in either case with or
 * without a separator or prefix between bytes (`de:ad`, `de ad`, `\xde\xad`, `0xde, 0xad`, `%de%ad`).
 * Line wraps inside an encoded form are taken out before matching (see wrapped-text.ts).
 */

/** An encoded form shorter than this is not masked (it would match ordinary text). */
export const MIN_FORM_LENGTH = 8;

const STANDARD = /[+/]/g;

function base64UrlOf(b64: string): string {
  return b64.replace(STANDARD, (c) => (c === '+' ? '-' : '_')).replace(/=+$/, '');
}

/**
 * The base64 text a value becomes inside any base64 text, at each of the three byte alignments: the
 * characters that depend on the value's bytes alone (the partial groups at both ends depend on the
 * bytes around it and are left out). Padding is never part of a core, so padded and unpadded text
 * match alike.
 */
function base64Cores(bytes: Buffer): string[] {
  const out = [bytes.toString('base64')];
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const start = [0, 2, 3][k];
    const end = 4 * Math.floor((k + bytes.length) / 3);
    if (end - start >= MIN_FORM_LENGTH) out.push(enc.slice(start, end));
  }
  return out;
}

/** Every literal form of `value` that is masked, longest first. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(uri.replace(/%20/g, '+'));
  forms.add(JSON.stringify(value).slice(1, -1));
  for (const b64 of base64Cores(Buffer.from(value, 'utf8'))) {
    forms.add(b64);
    forms.add(base64UrlOf(b64));
  }
  return [...forms].filter((f) => f.length >= MIN_FORM_LENGTH).sort((a, b) => b.length - a.length);
}

export function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/**
 * What may stand between two bytes of a hex dump: a few separator characters (space, tab, colon,
 * comma, semicolon, dot, dash, underscore) and then a byte prefix (`\x`, `0x`, `%`), each optional.
 * Bounded, so a long run of separators costs a bounded backtrack.
 */
const BETWEEN_BYTES = String.raw`[ \t:,;._-]{0,3}(?:\\x|0[xX]|%)?`;

/** One hex digit of either case: `a` becomes `[aA]`. */
function hexDigit(d: string): string {
  return /[0-9]/.test(d) ? d : `[${d}${d.toUpperCase()}]`;
}

/** The regular-expression source of `value`'s hex digits, upper, lower or mixed case, bytes apart or together. */
export function hexFormSource(value: string): string {
  const hex = Buffer.from(value, 'utf8').toString('hex');
  const bytes: string[] = [];
  for (let i = 0; i < hex.length; i += 2) bytes.push(hexDigit(hex[i]) + hexDigit(hex[i + 1]));
  return bytes.join(BETWEEN_BYTES);
}
