/** A plugin's run input: its JSON Schema (forms, `runtrail agents`, /api/plugins) and its check. */
import { checkSchema, jsonSchemaOf, type JsonSchema, type SchemaCheck } from '../tools/schema.js';
import type { BusinessPlugin } from './business-plugin.js';

export type { JsonSchema, SchemaCheck };

export function pluginInputJsonSchema(plugin: Pick<BusinessPlugin, 'inputSchema'>): JsonSchema {
  return jsonSchemaOf(plugin.inputSchema);
}

export function checkPluginInput(plugin: Pick<BusinessPlugin, 'inputSchema'>, value: unknown): SchemaCheck<Record<string, unknown>> {
  return checkSchema(plugin.inputSchema as BusinessPlugin['inputSchema'], value);
}
