/** A plugin's run input: its JSON Schema (forms, `runtrail agents`, /api/plugins) and its check. */
import { closestName } from '../events/did-you-mean.js';
import { checkSchema, jsonSchemaOf, type JsonSchema, type SchemaCheck, type SchemaIssue } from '../tools/schema.js';
import type { Agent } from './agent.js';

export type { JsonSchema, SchemaCheck };

export function pluginInputJsonSchema(plugin: Pick<Agent, 'inputSchema'>): JsonSchema {
  return jsonSchemaOf(plugin.inputSchema);
}

export function checkPluginInput(plugin: Pick<Agent, 'inputSchema'>, value: unknown): SchemaCheck<Record<string, unknown>> {
  const r = checkSchema(plugin.inputSchema as Agent['inputSchema'], value);
  return r.ok ? r : { ok: false, issues: inputKeyIssues(r.issues, value, pluginInputJsonSchema(plugin)) };
}

/**
 * The input's own keys said in the user's terms: a key the agent does not take is named with the
 * input it most likely meant, a required input left out is said to be missing — instead of the
 * validator's "expected string, received undefined" for the one and a bare list for the other.
 */
function inputKeyIssues(issues: SchemaIssue[], value: unknown, schema: JsonSchema): SchemaIssue[] {
  const properties = schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  if (!value || typeof value !== 'object' || Array.isArray(value) || properties.length === 0) return issues;
  const given = value as Record<string, unknown>;
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
  const unknown = Object.keys(given).filter((k) => !properties.includes(k));
  const missing = required.filter((k) => given[k] === undefined);
  const aboutKeys = (i: SchemaIssue): boolean =>
    (i.path.length === 0 && /^unknown field/.test(i.message)) ||
    (i.path.length === 1 && (unknown.includes(String(i.path[0])) || missing.includes(String(i.path[0]))));
  const own: SchemaIssue[] = [
    ...unknown.map((k) => {
      const meant = closestName(k, properties);
      return { path: [k], message: `is not an input of this agent (${meant ? `did you mean ${meant}?` : `its inputs: ${properties.join(', ')}`})` };
    }),
    ...missing.map((k) => ({ path: [k], message: 'is required and was not given' })),
  ];
  return [...own, ...issues.filter((i) => !aboutKeys(i))];
}
