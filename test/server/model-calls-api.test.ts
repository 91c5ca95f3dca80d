/**
 * GET /api/runs/:id/model-calls over real runs on the AI SDK providers against the loopback provider
 * servers, which keep the request bodies they received: each recorded call is what the provider was
 * sent (the same system prompt, messages, tool calls and results, tools and settings), secrets masked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startAnthropicLoopback, type AnthropicLoopback } from '../../bench/anthropic-loopback.js';
import { maskSecretValues } from '../../src/events/secret-values.js';
import { createAiSdkProvider } from '../../src/providers/ai-sdk-provider.js';
import type { ModelProvider, SentMessage, ToolSpec } from '../../src/providers/model-provider.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import type { ModelCall, ModelCallsPage } from '../../src/runtime/model-calls/model-call-record.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';
import { sse, startRecordedServer, type RecordedServer } from '../providers/recorded-server.js';
import { getJson } from './helpers.js';

const SECRET = 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';

let dir = '';
let service: RunService | null = null;
let server: RunningServer | null = null;
let upstream: { close(): Promise<void> } | null = null;
afterEach(async () => {
  await server?.close();
  await service?.close();
  await upstream?.close();
  server = service = upstream = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An agent with the tools the loopback turns call; its CSV rows carry a token someone pasted. */
function csvAgent() {
  const base = createTextOnlyPlugin({ name: 'csv', description: 'reads feedback', offlineAnswer: 'x' });
  const tool = (name: string, parameters: z.ZodType, content: string): AnyToolDefinition => ({
    name,
    description: `${name} tool`,
    parameters,
    execute: async () => ({ ok: true, content }),
  });
  return {
    ...base,
    createTools: () => [
      tool(
        'read_feedback_csv',
        z.object({ page: z.number().int().optional(), path: z.string(), max_rows: z.number().int().optional() }),
        `id,text\n1,"sync broke; my token is ${SECRET}"\n2,"slow"`,
      ),
      tool('list_artifacts', z.object({}), '[]'),
    ],
  };
}

async function start(provider: () => ModelProvider, extra: Partial<ConstructorParameters<typeof RunService>[0]> = {}): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-calls-api-'));
  service = new RunService({ dataDir: dir, agents: [csvAgent()], env: {}, processRegistry: null, providerResolver: provider, ...extra });
  server = await startServer({ service, port: 0, env: {}, logger: false });
  return server.url;
}

async function runToEnd(_url: string, body: Record<string, unknown> = {}): Promise<string> {
  const created = await service!.create({ plugin: 'csv', input: {}, goal: 'Find the top issue.', ...body });
  const done = await service!.wait(created.run_id);
  expect(done.status).toBe('completed');
  return created.run_id;
}

async function calls(url: string, runId: string, query = 'limit=200'): Promise<ModelCallsPage> {
  const r = await getJson(`${url}/api/runs/${runId}/model-calls?${query}`);
  expect(r.status).toBe(200);
  return r.body as ModelCallsPage;
}

/** One content item, in either form, as the comparison reads it. */
type Block =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'call'; id: string; name: string; args: unknown }
  | { kind: 'result'; id: string; text: string; error: boolean };

function recordBlocks(messages: SentMessage[]): Block[] {
  return messages.flatMap((m) =>
    m.parts.map((p): Block => {
      switch (p.type) {
        case 'text':
          return { kind: 'text', text: p.content };
        case 'reasoning':
          return { kind: 'reasoning', text: p.content };
        case 'tool_call':
          return { kind: 'call', id: p.id, name: p.name, args: p.arguments };
        case 'tool_call_response':
          return { kind: 'result', id: p.id, text: String(p.response), error: p.is_error === true };
        default:
          throw new Error(`unexpected part ${p.type}`);
      }
    }),
  );
}

function anthropicBlocks(body: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  for (const m of body.messages as Array<{ content: string | Array<Record<string, unknown>> }>) {
    for (const c of typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content) {
      if (c.type === 'text') out.push({ kind: 'text', text: maskSecretValues(String(c.text)) });
      else if (c.type === 'thinking') out.push({ kind: 'reasoning', text: String(c.thinking) });
      else if (c.type === 'tool_use') out.push({ kind: 'call', id: String(c.id), name: String(c.name), args: c.input });
      else if (c.type === 'tool_result') {
        const text = typeof c.content === 'string' ? c.content : (c.content as Array<{ text?: string }>).map((x) => x.text ?? '').join('');
        out.push({ kind: 'result', id: String(c.tool_use_id), text: maskSecretValues(text), error: c.is_error === true });
      } else throw new Error(`unexpected block ${String(c.type)}`);
    }
  }
  return out;
}

function openaiBlocks(body: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  for (const m of body.messages as Array<{
    role: string;
    content: string | null;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>) {
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      out.push({ kind: 'result', id: m.tool_call_id!, text: maskSecretValues(m.content ?? ''), error: false });
      continue;
    }
    if (m.content) out.push({ kind: 'text', text: maskSecretValues(m.content) });
    for (const c of m.tool_calls ?? []) out.push({ kind: 'call', id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) });
  }
  return out;
}

function cacheMarks(body: Record<string, unknown>): string[] {
  const marks: string[] = [];
  if ((body.tools as Array<Record<string, unknown>>).some((t) => t.cache_control)) marks.push('tools');
  if ((body.system as Array<Record<string, unknown>>).some((s) => s.cache_control)) marks.push('system');
  (body.messages as Array<{ content: Array<Record<string, unknown>> }>).forEach((m, i) => {
    if (m.content.at(-1)?.cache_control) marks.push(`messages[${i}]`);
  });
  return marks;
}

/** A body's settings: everything but its content. */
const settingsOf = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !['messages', 'system', 'tools', 'tool_choice'].includes(k)));

const toolsOf = (page: ModelCallsPage, c: ModelCall): ToolSpec[] => page.tool_sets[c.request.tools!.set];

describe('GET /api/runs/:id/model-calls', () => {
  it('Anthropic: each call is the request the Messages API received — system, thinking, tool calls, results, tools, cache breakpoints, output limit', async () => {
    const turns = [
      {
        thinking: 'Need the rows first.',
        text: 'Reading the feedback.',
        toolUses: [{ name: 'read_feedback_csv', input: { page: 0, path: 'input/feedback.csv' } }],
      },
      { thinking: 'One more look.', toolUses: [{ name: 'list_artifacts', input: {} }] },
      { thinking: 'Enough.', text: 'Sync failures are the top issue.' },
    ];
    const loop: AnthropicLoopback = await startAnthropicLoopback(turns, { minCacheTokens: 1024 });
    upstream = loop;
    const url = await start(() =>
      createAiSdkProvider({
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        baseURL: loop.baseURL,
        env: { ANTHROPIC_API_KEY: 'sk-ant-loopback-0000000000000000' },
      }),
    );
    const runId = await runToEnd(url, { reasoning: 'low' });
    const page = await calls(url, runId);
    expect(page.total).toBe(loop.requests.length);
    expect(page.calls).toHaveLength(3);
    page.calls.forEach((c, i) => {
      const body = loop.requests[i]!.body;
      expect(c.request.source).toBe('api');
      expect(c.request.system).toBe((body.system as Array<{ text: string }>).map((s) => s.text).join('\n\n'));
      expect(recordBlocks(c.request.messages)).toEqual(anthropicBlocks(body));
      expect(toolsOf(page, c).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))).toEqual(
        (body.tools as Array<Record<string, unknown>>).map(({ name, description, input_schema }) => ({ name, description, input_schema })),
      );
      expect(c.request.settings).toMatchObject({
        model: 'anthropic:claude-sonnet-4-5',
        max_output_tokens: body.max_tokens,
        reasoning: 'low',
        cache_breakpoints: cacheMarks(body),
      });
      expect(c.request.settings.provider_options).toEqual({
        anthropic: { thinking: { type: 'enabled', budgetTokens: (body.thinking as { budget_tokens: number }).budget_tokens } },
      });
      expect(c.request.settings.api).toEqual(settingsOf(body));
      expect(c.span_id).toBe(`model:${i + 1}.0`);
    });
    // the response side: thinking, text, tool calls with the ids the next request's results answer
    expect(page.calls[0].response).toMatchObject({ reasoning: 'Need the rows first.', text: 'Reading the feedback.', finish_reason: 'tool-calls' });
    const callId = page.calls[0].response.tool_calls[0].id;
    expect(anthropicBlocks(loop.requests[1]!.body)).toContainEqual(expect.objectContaining({ kind: 'result', id: callId }));
    expect(page.calls[2].response.text).toBe('Sync failures are the top issue.');
    // usage as the provider reported it, priced
    const u = loop.requests[0]!.usage;
    expect(page.calls[0].usage).toMatchObject({
      input: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
      cached_input: u.cache_read_input_tokens,
      cache_write: u.cache_creation_input_tokens,
    });
    expect(page.calls[0].cost_usd).toBeGreaterThan(0);
    // the token a tool returned reached the provider, and is masked in the record
    expect(JSON.stringify(loop.requests[1]!.body)).toContain(SECRET);
    expect(JSON.stringify(page)).not.toContain(SECRET);
  });

  it('OpenAI chat completions: each call is the request body the server received; paged and narrowed by turn', async () => {
    const rec: RecordedServer = await startRecordedServer();
    upstream = rec;
    rec.reply(sse('openai-chat-tool-call.sse'), sse('openai-chat-text.sse'));
    const url = await start(() =>
      createAiSdkProvider({ provider: 'openai', model: 'gpt-4o-mini', baseURL: rec.baseURL, env: { OPENAI_API_KEY: 'sk-test-secret-key-0123456789' } }),
    );
    const runId = await runToEnd(url);
    const page = await calls(url, runId);
    expect(page.calls).toHaveLength(rec.requests.length);
    page.calls.forEach((c, i) => {
      const body = rec.requests[i]!.body;
      const messages = body.messages as Array<{ role: string; content: string }>;
      expect(messages[0]).toEqual({ role: 'system', content: c.request.system });
      expect(recordBlocks(c.request.messages)).toEqual(openaiBlocks(body));
      expect(toolsOf(page, c).map((t) => t.name)).toEqual((body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name));
      expect(c.request.settings).toMatchObject({ model: 'openai:gpt-4o-mini', max_output_tokens: body.max_tokens ?? null, cache_key: `runtrail-${runId}` });
      expect(c.request.settings.provider_options).toEqual({ openai: { promptCacheKey: body.prompt_cache_key } });
      expect(c.request.settings.api).toEqual(settingsOf(body));
    });
    expect(page.calls[0].response.tool_calls).toEqual([
      { id: 'call_Qm2Xb7RkP0aLs9TzVw3Nc1Ue', name: 'read_feedback_csv', arguments: { path: 'input/feedback.csv', max_rows: 200 } },
    ]);
    expect(JSON.stringify(page)).not.toContain(SECRET);
    // paging and ?turn=
    const second = await calls(url, runId, 'offset=1&limit=1');
    expect(second).toMatchObject({ total: 2, offset: 1, limit: 1 });
    expect(second.calls.map((c) => c.call)).toEqual([2]);
    expect(second.calls[0].request.messages).toEqual(page.calls[1].request.messages);
    expect((await calls(url, runId, 'turn=1')).calls.map((c) => c.span_id)).toEqual(['model:1.0']);
  });

  it('refuses a bad query naming the field, answers 404 for an unknown run, says when capture was off', async () => {
    const rec: RecordedServer = await startRecordedServer();
    upstream = rec;
    rec.reply(sse('openai-chat-text.sse'));
    const url = await start(
      () => createAiSdkProvider({ provider: 'openai', model: 'gpt-4o-mini', baseURL: rec.baseURL, env: { OPENAI_API_KEY: 'sk-test-secret-key-0123456789' } }),
      {
        defaults: () => ({ capture: { model_io: false } }),
      },
    );
    const runId = await runToEnd(url);
    expect(await calls(url, runId)).toMatchObject({ capture: 'off', total: 0, calls: [] });
    for (const [q, field, range] of [
      ['limit=0', 'limit', '1..200'],
      ['limit=500', 'limit', '1..200'],
      ['limit=abc', 'limit', '1..200'],
      ['turn=-1', 'turn', '1..'],
      ['offset=1.5', 'offset', '0..'],
    ]) {
      const r = await getJson(`${url}/api/runs/${runId}/model-calls?${q}`);
      expect(r.status).toBe(400);
      // a query error, not a body's: the parameter, its range and what was sent
      expect(r.body.error.code).toBe('invalid_query');
      expect(r.body.error.message).toMatch(new RegExp(`^query parameter ${field} must be a whole number in ${range.replace('.', '\\.')}`));
      expect(r.body.error.message).toContain(JSON.stringify(q.split('=')[1]));
      expect(r.body.error.message).not.toContain('body');
    }
    expect((await getJson(`${url}/api/runs/run_20000101_000000_000000/model-calls`)).status).toBe(404);
    expect((await getJson(`${url}/api/runs/${runId}/model-calls/files/..%2Frun_status.json`)).status).toBe(404);
  });
});
