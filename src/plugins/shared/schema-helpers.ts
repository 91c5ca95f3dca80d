/** zod builders whose messages name the offending value, so a validator's report is actionable. */
import { z } from 'zod';

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: (iss) => `expected one of ${values.join('|')}, got ${JSON.stringify(iss.input)}` });
}

export function text(min: number, max: number) {
  return z
    .string({ error: (iss) => `expected a string, got ${JSON.stringify(iss.input)}` })
    .min(min, { error: `must not be shorter than ${min} characters` })
    .max(max, { error: `must be at most ${max} characters` });
}

/** Render a zod issue path the way people write it: themes[0].evidence[1].feedback_id */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out || '(root)';
}

/** The value at a path, for messages; undefined when absent. */
export function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

export function preview(v: unknown, max = 80): string {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
