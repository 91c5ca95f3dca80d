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
