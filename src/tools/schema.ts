/**
 * One notion of "a schema" for tool arguments, plugin inputs and JSON artifacts: a zod schema (the
 * builtins) or a plain JSON Schema (Markdown agents, code plugins, MCP servers), checked with ajv.
 * Either way a check gives the value (defaults filled) or issues with field paths.
 */
import { createRequire } from 'node:module';
import { z } from 'zod';
import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from 'ajv';
import { isFlatRecord } from './flat-record.js';

export type JsonSchema = Record<string, unknown>;
export type Schema<T = unknown> = z.ZodType<T> | JsonSchema;

export interface SchemaIssue {
  /** Field path, e.g. ['artifacts', 1, 'type']; empty for the value itself. */
  path: Array<string | number>;
  message: string;
}

export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

export function isZodSchema(s: unknown): s is z.ZodType {
  return typeof s === 'object' && s !== null && '_zod' in s && typeof (s as { safeParse?: unknown }).safeParse === 'function';
}

// ajv is CommonJS; createRequire keeps its constructors' types and works under NodeNext
const require = createRequire(import.meta.url);
type AjvClass = new (opts: Record<string, unknown>) => AjvInstance;
const Ajv07 = (require('ajv') as { default: AjvClass }).default;
const Ajv2019 = (require('ajv/dist/2019') as { default: AjvClass }).default;
const Ajv2020 = (require('ajv/dist/2020') as { default: AjvClass }).default;
const addFormats = (require('ajv-formats') as { default: (ajv: AjvInstance) => void }).default;

/** Formats Runtrail itself gives meaning to: `file` marks an input that is a path to copy into input/. */
const RUNTRAIL_FORMATS = ['file'];

function makeAjv(Cls: AjvClass): AjvInstance {
  // strict off: schemas come from users and MCP servers, with keywords (x-…, examples) ajv does not know
  const ajv = new Cls({ allErrors: true, strict: false, useDefaults: true, validateFormats: true });
  addFormats(ajv);
  for (const f of RUNTRAIL_FORMATS) ajv.addFormat(f, true);
  return ajv;
}

let engines: { d07: AjvInstance; d2019: AjvInstance; d2020: AjvInstance } | null = null;

/** The ajv engine for the schema's `$schema` (draft-07 when absent), and the schema without that key. */
function engineFor(schema: JsonSchema): { ajv: AjvInstance; body: JsonSchema } {
  engines ??= { d07: makeAjv(Ajv07), d2019: makeAjv(Ajv2019), d2020: makeAjv(Ajv2020) };
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const { $schema: _dialect, ...body } = schema;
  const ajv = dialect.includes('2020-12') ? engines.d2020 : dialect.includes('2019-09') ? engines.d2019 : engines.d07;
  return { ajv, body };
}

const compiled = new WeakMap<object, ValidateFunction>();

export type CompileResult = { ok: true; validate: ValidateFunction } | { ok: false; message: string };

/** Compiles a JSON Schema once (cached per object); an invalid schema is a message, never a throw. */
export function compileJsonSchema(schema: JsonSchema): CompileResult {
  const hit = compiled.get(schema);
  if (hit) return { ok: true, validate: hit };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, message: 'a schema must be an object' };
  try {
    const { ajv, body } = engineFor(schema);
    const validate = ajv.compile(body);
    compiled.set(schema, validate);
    return { ok: true, validate };
  } catch (e) {
    return { ok: false, message: `not a valid JSON Schema: ${(e as Error).message}` };
  }
}

function pointerPath(pointer: string): Array<string | number> {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

function ajvIssue(e: ErrorObject): SchemaIssue {
  const path = pointerPath(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { path: [...path, String(p.missingProperty)], message: 'is required' };
    case 'additionalProperties':
      return { path: [...path, String(p.additionalProperty)], message: 'is not a known field' };
    case 'enum':
      return { path, message: `must be one of ${(p.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}` };
    case 'const':
      return { path, message: `must be ${JSON.stringify(p.allowedValue)}` };
    default:
      return { path, message: e.message ?? `fails ${e.keyword}` };
  }
}

/** zod's message, except that unknown keys are named (its own says only "Unrecognized key"). */
function zodMessage(i: z.core.$ZodIssue): string {
  const keys = (i as { keys?: string[] }).keys;
  return i.code === 'unrecognized_keys' && keys?.length ? `unknown field(s): ${keys.join(', ')}` : i.message;
}

/**
 * The value a handler gets: its own copy, so neither ajv's defaults nor a handler that edits its
 * arguments reach the caller's object (the model's call in the conversation). A flat object, the
 * usual tool call, is copied by a spread; structuredClone per call costs more than the check.
 */
function ownCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  return isFlatRecord(value) ? { ...value } : structuredClone(value);
}

/** Validates `value`; a JSON Schema's defaults are filled into a copy, never into `value` itself. */
export function checkSchema<T>(schema: Schema<T>, value: unknown): SchemaCheck<T> {
  if (isZodSchema(schema)) {
    const r = schema.safeParse(value);
    if (r.success) return { ok: true, value: r.data as T };
    return { ok: false, issues: r.error.issues.map((i) => ({ path: i.path.map((k) => (typeof k === 'number' ? k : String(k))), message: zodMessage(i) })) };
  }
  const c = compileJsonSchema(schema);
  if (!c.ok) return { ok: false, issues: [{ path: [], message: `the schema itself is invalid (${c.message})` }] };
  const copy = ownCopy(value);
  if (c.validate(copy)) return { ok: true, value: copy as T };
  // anyOf/oneOf report every branch; the most specific (deepest) messages say the most
  const issues = (c.validate.errors ?? []).map(ajvIssue);
  return { ok: false, issues: dedupe(issues) };
}

function dedupe(issues: SchemaIssue[]): SchemaIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${i.path.join('.')}\u0000${i.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The JSON Schema a model or a form sees: zod converted, a JSON Schema as given (minus `$schema`). */
export function jsonSchemaOf(schema: Schema): JsonSchema {
  if (!isZodSchema(schema)) {
    const { $schema: _dialect, ...rest } = schema;
    return rest;
  }
  try {
    const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    delete out.$schema;
    return out;
  } catch {
    return { type: 'object' };
  }
}

/** Render a field path the way people write it: themes[0].evidence[1].feedback_id */
export function formatSchemaPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out || '(root)';
}

/** "a.b: message; c: message" */
export function issuesText(issues: SchemaIssue[]): string {
  return issues.map((i) => `${formatSchemaPath(i.path)}: ${i.message}`).join('; ');
}

/** The checked value, or a thrown Error listing the issues (for callers that cannot go on without it). */
export function parseSchema<T>(schema: Schema<T>, value: unknown): T {
  const r = checkSchema(schema, value);
  if (!r.ok) throw new Error(issuesText(r.issues));
  return r.value;
}
