/** `--input key=value`… and `--input-json JSON|@file` → the run's input object. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './cli-io.js';

export function parseInputJson(value: string, cwd: string): Record<string, unknown> {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(resolve(cwd, value.slice(1)), 'utf8');
    } catch (e) {
      throw new UsageError(`--input-json: cannot read ${value.slice(1)}: ${(e as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--input-json: not valid JSON (${(e as Error).message})`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--input-json: must be a JSON object');
  return parsed as Record<string, unknown>;
}

export function parseInputPairs(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`--input ${JSON.stringify(p)}: expected key=value`);
    out[p.slice(0, i).trim()] = p.slice(i + 1);
  }
  return out;
}

/**
 * Strings from `--input` stay strings unless the plugin's schema rejects them and their JSON reading
 * (a number, boolean or null) fits: `--input max_rows=500` then becomes 500.
 */
/** `issues` is the plugin's input check: the fields it names that came from key=value text are tried as JSON. */
export function coerceInput(
  input: Record<string, unknown>,
  fromPairs: Set<string>,
  issues: (v: unknown) => Array<{ path: Array<string | number> }>,
): Record<string, unknown> {
  const found = issues(input);
  if (found.length === 0) return input;
  const out = { ...input };
  for (const issue of found) {
    const key = String(issue.path[0] ?? '');
    if (!fromPairs.has(key) || typeof out[key] !== 'string') continue;
    try {
      const v = JSON.parse(out[key] as string) as unknown;
      if (typeof v === 'number' || typeof v === 'boolean' || v === null) out[key] = v;
    } catch {
      // not JSON: keep the string and let validation name the field
    }
  }
  return out;
}
