/**
 * The one argument parser of every `runtrail` command: node's parseArgs, strict, with the options
 * every command takes (--data-dir, --project, --strict, --help); a bad option is a UsageError (exit 2).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../events/did-you-mean.js';
import { UsageError } from './cli-io.js';

/** Parsed option values, by option name. */
export type Values = Record<string, string | boolean | string[] | undefined>;

/** A command's own options (the common ones are added). */
export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface ParsedArgs {
  values: Values;
  positionals: string[];
}

const COMMON_OPTIONS: OptionSpec = {
  'data-dir': { type: 'string' },
  project: { type: 'string' },
  strict: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export function parse(args: string[], options: OptionSpec): ParsedArgs {
  const all = { ...COMMON_OPTIONS, ...options };
  try {
    const r = parseArgs({ args, options: all, allowPositionals: true, strict: true });
    return { values: r.values as Values, positionals: r.positionals };
  } catch (e) {
    const err = e as Error & { code?: string };
    const unknown = err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-[^']*)'/.exec(err.message)?.[1] : undefined;
    if (unknown !== undefined) {
      // node's text suggests `--` for a positional; a flag typed wrong is the likelier slip
      const flags = Object.keys(all).map((k) => `--${k}`);
      throw new UsageError(`unknown option ${unknown}${didYouMean(unknown.replace(/=.*$/, ''), flags)}`);
    }
    throw new UsageError(err.message);
  }
}

/** `--name N`: absent → undefined; not a number ≥ min → UsageError naming the option and the value. */
export function intOpt(values: Values, name: string, min: number): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !/^\d+(\.\d+)?$/.test(v.trim()) || !Number.isFinite(n) || n < min)
    throw new UsageError(`--${name} must be a number ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}
