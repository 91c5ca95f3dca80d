/** A plugin's run input: its JSON Schema (forms, `runtrail agents`, /api/plugins) and its check. */
import { checkSchema, jsonSchemaOf, type JsonSchema, type SchemaCheck } from '../tools/schema.js';
import type { Agent } from './agent.js';

export type { JsonSchema, SchemaCheck };

export function pluginInputJsonSchema(plugin: Pick<Agent, 'inputSchema'>): JsonSchema {
  return jsonSchemaOf(plugin.inputSchema);
}

export function checkPluginInput(plugin: Pick<Agent, 'inputSchema'>, value: unknown): SchemaCheck<Record<string, unknown>> {
  return checkSchema(plugin.inputSchema as Agent['inputSchema'], value);
}
