/**
 * The JSON Schema of a Markdown agent's frontmatter (`.runtrail/agents/<name>.md`), checked with ajv
 * so that every error names the field path and what was expected.
 */
import type { JsonSchema } from '../tools/schema.js';
import { AGENT_SANDBOX_SCHEMA, OPERATOR_SANDBOX_SCHEMA } from '../sandbox/sandbox-policy.js';

export const ARTIFACT_TYPES = ['markdown', 'json', 'text', 'csv'] as const;
export const AGENT_NAME_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
const stringList = { type: 'array', items: { type: 'string', minLength: 1 } };
const limits = {
  type: 'object',
  additionalProperties: false,
  properties: {
    max_iterations: { type: 'integer', minimum: 1, maximum: 200 },
    max_tool_calls: { type: 'integer', minimum: 1, maximum: 1000 },
    timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 86400 },
    stop_repair_turns: { type: 'integer', minimum: 0, maximum: 10 },
    context_tokens: { type: 'integer', minimum: 2048, maximum: 100000000 },
    approval_timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 86400 },
  },
};

/** `capture: { model_io: false }` turns the model-call record off; `max_call_bytes` caps one call's record. */
const capture = {
  type: 'object',
  additionalProperties: false,
  properties: {
    model_io: { type: 'boolean' },
    max_call_bytes: { type: 'integer', minimum: 16384, maximum: 1073741824 },
  },
};

export const AGENT_FRONTMATTER_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'description'],
  properties: {
    name: { type: 'string', pattern: AGENT_NAME_PATTERN, maxLength: 64 },
    description: { type: 'string', minLength: 1, maxLength: 2000 },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+(?:[-+][0-9A-Za-z.-]+)?$' },
    model: { type: 'string', minLength: 1, maxLength: 500 },
    reasoning: { enum: ['off', 'low', 'medium', 'high'] },
    goal: { type: 'string', minLength: 1, maxLength: 8000 },
    tools: stringList,
    skills: stringList,
    agents: stringList,
    mcpServers: { type: 'array', items: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'object' }] } },
    permissions: { type: 'object', additionalProperties: { enum: ['allow', 'ask', 'deny'] } },
    durability: { enum: ['resume', 'interrupt'] },
    input: { type: 'object' },
    artifacts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path'],
        properties: {
          path: { type: 'string', minLength: 1, maxLength: 500 },
          type: { enum: [...ARTIFACT_TYPES] },
          required: { type: 'boolean' },
          headings: stringList,
          description: { type: 'string', maxLength: 2000 },
          schema: { type: 'object' },
          audience: { enum: ['user', 'operator', 'internal'] },
          sensitivity: { enum: ['public', 'internal', 'confidential'] },
        },
      },
    },
    plan: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' },
          title: { type: 'string', minLength: 1 },
          tools: stringList,
          done_when_tools_succeeded: stringList,
          done_when_artifacts_exist: stringList,
        },
      },
    },
    limits,
    capture,
    /** What its processes may touch (files, network, environment, limits); config.json bounds it. */
    sandbox: AGENT_SANDBOX_SCHEMA,
    // what a schedule holds is checked by src/triggers (cron patterns, zones, webhooks)
    schedule: { type: 'object' },
  },
};

const positive = { type: 'number', exclusiveMinimum: 0 };
const count = { type: 'integer', minimum: 1 };

export const CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 500 },
    limits,
    /** How far a request over HTTP may raise an agent's limits (without it: not past the agent's own). */
    request_limits: limits,
    /** The HTTP server's timeouts and connection caps (server/http-limits.ts). */
    http: {
      type: 'object',
      additionalProperties: false,
      properties: {
        headers_timeout_s: positive,
        body_grace_s: positive,
        body_min_bytes_per_s: { type: 'number', minimum: 0 },
        keep_alive_s: positive,
        max_connections: count,
        max_connections_per_client: count,
        max_streams_per_client: count,
      },
    },
    /** What each client address may keep in <dataDir>/uploads (server/upload-quota.ts). */
    uploads: {
      type: 'object',
      additionalProperties: false,
      properties: { max_file_bytes: count, max_files_per_client: count, max_bytes_per_client: count, max_age_s: positive },
    },
    disable: stringList,
    plugins: stringList,
    capture,
    /** The operator's side of the sandbox: mode, elevated, and the bounds of every agent's ask. */
    sandbox: OPERATOR_SANDBOX_SCHEMA,
    /** Runs whose process died: resumed from their checkpoint (at most max_resumes times) or interrupted. */
    durability: {
      type: 'object',
      additionalProperties: false,
      properties: { resume: { type: 'boolean' }, max_resumes: { type: 'integer', minimum: 0, maximum: 100 } },
    },
    // completion webhooks and schedules: checked by src/triggers, which names each wrong field
    webhooks: { type: 'object' },
    schedules: { type: 'object' },
  },
};
