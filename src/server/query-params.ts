/**
 * Query parameters of the HTTP API read as what they are: a bad one is refused as a query error
 * (400 invalid_query) naming the parameter, the range or values it takes and what was sent — never
 * as a request body, which a GET does not have.
 */
import { HttpError } from './http-error.js';

export function invalidQuery(name: string, expected: string, got: string): HttpError {
  const sent = JSON.stringify(got).slice(0, 40);
  return new HttpError(400, 'invalid_query', `query parameter ${name} ${expected}, got ${sent}`, {
    issues: [{ path: name, message: `${expected}, got ${sent}` }],
  });
}

/** A whole number in min..max; absent or empty is undefined. */
export function intQuery(v: string | undefined, name: string, min: number, max: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = /^\d{1,10}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw invalidQuery(name, `must be a whole number in ${min}..${max}`, v);
  return n;
}

/** One of the given words; absent or empty is undefined. */
export function oneOfQuery<T extends string>(v: string | undefined, name: string, words: readonly T[]): T | undefined {
  if (v === undefined || v === '') return undefined;
  if (!words.includes(v as T)) throw invalidQuery(name, `must be one of ${words.join('|')}`, v);
  return v as T;
}

/** A text of at most max characters; absent or empty is undefined. */
export function textQuery(v: string | undefined, name: string, max: number): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (v.length > max) throw invalidQuery(name, `must be at most ${max} characters`, `${v.slice(0, 20)}…`);
  return v;
}
