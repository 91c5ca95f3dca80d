/**
 * POST /api/chat and GET /api/chat/:id/stream read by the AI SDK's own client code (ai@6): DefaultChatTransport,
 * readUIMessageStream, and AbstractChat (the class useChat wraps) — not a parser of ours.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/runtime/agent.js';
import { createChatPlugin } from '../../src/plugins/chat/chat-plugin.js';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import { RunService, defaultProviderResolver } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { tracePlugin, traceTurns } from '../fixtures/trace-plugin.js';

let dir = '';
let server: RunningServer | null = null;
let service: RunService | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  await service?.close();
  service = null;
  rmSync(dir, { recursive: true, force: true });
});

async function start(turns: () => unknown[] = () => traceTurns(5), plugins: Agent[] = [tracePlugin({ toolMs: 20 })]): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-chat-'));
  service = new RunService({
    dataDir: dir,
    agents: [...plugins, { ...createChatPlugin(), defaultSkill: null }],
    env: {},
    providerResolver: (spec, o) =>
      o.offlineProcedure === createChatPlugin().offlineProcedure || spec === 'offline' ? defaultProviderResolver(spec, o) : createScriptProvider(turns()),
    backoffMs: () => 5,
  });
  server = await startServer({ service, port: 0, env: {} });
  return server.url;
}

const userMessage = (text: string, id = 'u1'): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

async function lastOf(
  stream: ReadableStream<Parameters<typeof readUIMessageStream>[0]['stream'] extends ReadableStream<infer C> ? C : never>,
): Promise<UIMessage> {
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream })) last = m;
  return last!;
}

/** The state useChat keeps in React, kept in plain fields: AbstractChat does the rest. */
class TestChat extends AbstractChat<UIMessage> {
  constructor(init: ConstructorParameters<typeof AbstractChat<UIMessage>>[0] extends infer I ? Omit<I, 'state'> : never) {
    let status: ChatStatus = 'ready';
    let error: Error | undefined;
    let messages: UIMessage[] = [];
    const state: ChatState<UIMessage> = {
      get status() {
        return status;
      },
      set status(s) {
        status = s;
      },
      get error() {
        return error;
      },
      set error(e) {
        error = e;
      },
      get messages() {
        return messages;
      },
      set messages(m) {
        messages = m;
      },
      pushMessage: (m) => void (messages = [...messages, m]),
      popMessage: () => void (messages = messages.slice(0, -1)),
      replaceMessage: (i, m) => void (messages = [...messages.slice(0, i), m, ...messages.slice(i + 1)]),
      snapshot: (x) => structuredClone(x),
    };
    super({ ...init, state });
  }
}

describe('POST /api/chat (AI SDK UI message stream v1)', () => {
  it('a run as one assistant message: a step per model call with reasoning, tool calls and their outputs, process data parts, the text', async () => {
    const url = await start();
    const transport = new DefaultChatTransport({ api: `${url}/api/chat?plugin=tracer` });
    const stream = await transport.sendMessages({
      chatId: 'chat-1',
      messages: [userMessage('What does tiny mean?')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const msg = await lastOf(stream);

    const runs = (await service!.list()).runs;
    expect(runs).toHaveLength(1);
    const run = runs[0];
    expect(run).toMatchObject({ plugin: 'tracer', goal: 'What does tiny mean?', conversation_id: 'chat-1', status: 'completed' });
    expect(msg.id).toBe(run.run_id);
    expect(msg.role).toBe('assistant');
    expect(msg.metadata).toMatchObject({ run_id: run.run_id, trace_id: run.trace_id, conversation_id: 'chat-1', status: 'completed' });

    // four model calls (the first failed and was retried): four steps
    expect(msg.parts.filter((p) => p.type === 'step-start')).toHaveLength(4);
    const reasoning = msg.parts.find((p) => p.type === 'reasoning');
    expect(reasoning).toMatchObject({ text: 'I should look it up and read the file.', state: 'done' });
    const tools = msg.parts.filter((p) => p.type === 'dynamic-tool');
    expect(tools.map((t) => [t.toolName, t.state])).toEqual([
      ['lookup', 'output-available'],
      ['mcp__files__read_file', 'output-available'],
      ['flaky', 'output-error'],
    ]);
    expect(tools[0]).toMatchObject({ input: { q: 'tiny' }, output: 'tiny: a small word' });
    expect(tools[1]).toMatchObject({ title: 'files · read_file', output: 'contents of notes.md' });
    expect(tools[2]).toMatchObject({ errorText: 'flaky: the service said no' });
    const text = msg.parts.filter((p) => p.type === 'text');
    expect(text).toEqual([{ type: 'text', text: 'Tiny means very small; the notes agree.', state: 'done' }]);
    // the tool calls a model call asked for sit in its step: step 2 holds the reasoning and both calls
    const steps: string[][] = [];
    for (const p of msg.parts) {
      if (p.type === 'step-start') steps.push([]);
      else if (p.type !== 'data-process') steps.at(-1)?.push(p.type === 'dynamic-tool' ? p.toolName : p.type);
    }
    expect(steps).toEqual([[], ['reasoning', 'lookup', 'mcp__files__read_file'], ['flaky'], ['text']]);
    // process events: one data part per operation, updated in place to its last state
    const processes = msg.parts.filter((p) => p.type === 'data-process') as Array<{ id: string; data: { operationId: string; status: string } }>;
    expect(processes.length).toBeGreaterThan(0);
    expect(new Set(processes.map((p) => p.id)).size).toBe(processes.length);
    expect(processes.find((p) => p.id === run.run_id)?.data.status).toBe('completed');
  });

  it('speaks the protocol on the wire: the v1 header, SSE data lines, start … finish, then [DONE]', async () => {
    const url = await start();
    const res = await fetch(`${url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'chat-raw', messages: [userMessage('hi')], trigger: 'submit-message', plugin: 'tracer' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const raw = await res.text();
    const data = raw
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map((b) => b.slice(6));
    expect(data.at(-1)).toBe('[DONE]');
    const types = data.slice(0, -1).map((d) => (JSON.parse(d) as { type: string }).type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(types.filter((t) => t === 'start-step').length).toBe(types.filter((t) => t === 'finish-step').length);
    for (const t of [
      'text-start',
      'text-delta',
      'text-end',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-end',
      'tool-input-available',
      'tool-output-available',
      'tool-output-error',
      'data-process',
    ])
      expect(types).toContain(t);
  });

  it('the chat id is the conversation: the next message is a run with the earlier turns as history; the default plugin is chat', async () => {
    const url = await start();
    const transport = new DefaultChatTransport({ api: `${url}/api/chat` });
    const first = await lastOf(
      await transport.sendMessages({ chatId: 'c2', messages: [userMessage('hello')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }),
    );
    expect(first.parts.find((p) => p.type === 'text')).toMatchObject({ text: expect.stringContaining('Hello!') });
    const msgs = [userMessage('hello'), first, userMessage('help', 'u2')];
    const second = await lastOf(
      await transport.sendMessages({ chatId: 'c2', messages: msgs, trigger: 'submit-message', messageId: undefined, abortSignal: undefined }),
    );
    const runs = (await service!.list()).runs.sort((a, b) => a.run_id.localeCompare(b.run_id));
    expect(runs.map((r) => [r.plugin, r.goal, r.conversation_id])).toEqual([
      ['chat', 'hello', 'c2'],
      ['chat', 'help', 'c2'],
    ]);
    expect(second.id).toBe(runs[1].run_id);
  });

  it('bad requests are 400 naming the field; an unknown plugin 404; a script model refused; a chat with a live run 409', async () => {
    const url = await start(() => [{ text: 'slow', delayMs: 60_000 }]);
    const post = async (body: unknown, q = '') => {
      const r = await fetch(`${url}/api/chat${q}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as { error: { code: string; message: string; details: { issues?: Array<{ path: string }> } } } };
    };
    const paths = (r: Awaited<ReturnType<typeof post>>) => [...new Set(r.body.error.details.issues?.map((i) => i.path))];
    expect(paths(await post({ messages: [userMessage('x')] }))).toEqual(['id']);
    expect(paths(await post({ id: 'a/../b', messages: [userMessage('x')] }))).toEqual(['id']);
    expect(paths(await post({ id: 'c', messages: [] }))).toEqual(['messages']);
    expect(paths(await post({ id: 'c', messages: [{ id: 'm', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }))).toEqual(['messages.0.role']);
    expect(paths(await post({ id: 'c', messages: [{ id: 'm', role: 'user', parts: [{ type: 'file', url: 'data:,', mediaType: 'text/plain' }] }] }))).toEqual([
      'messages.0.parts',
    ]);
    expect(paths(await post({ id: 'c', messages: [userMessage('x')], surprise: 1 }))).toEqual(['(body)']);
    expect((await post({ id: 'c', messages: [userMessage('x')], surprise: 1 })).body.error.message).toContain('surprise');
    expect(paths(await post({ id: 'c', messages: [userMessage('x')], plugin: 'chat' }, '?plugin=tracer'))).toEqual(['agent']);
    expect(paths(await post({ id: 'c', messages: [userMessage('x')], agent: 'chat' }, '?agent=tracer'))).toEqual(['agent']);
    const unknown = await post({ id: 'c', messages: [userMessage('x')] }, '?plugin=nosuch');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('unknown_plugin');
    const script = await post({ id: 'c', messages: [userMessage('x')], plugin: 'tracer', model: 'script:/etc/passwd' });
    expect(paths(script)).toEqual(['model']);
    expect(await service!.list()).toMatchObject({ total: 0 });

    // a live run in the chat: a second message is refused, pointing at resume and cancel
    const ctrl = new AbortController();
    const transport = new DefaultChatTransport({ api: `${url}/api/chat?plugin=tracer` });
    await transport.sendMessages({ chatId: 'busy', messages: [userMessage('go')], trigger: 'submit-message', messageId: undefined, abortSignal: ctrl.signal });
    const busy = await post({ id: 'busy', messages: [userMessage('again')] }, '?plugin=tracer');
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toContain('GET /api/chat/busy/stream');
    ctrl.abort();
  });
});

describe('how a run that does not complete ends its message', () => {
  it("a failed run: an error chunk (useChat's onError) and finish; a cancelled run: abort", async () => {
    const url = await start(() => [{ error: { code: 'auth', message: 'bad key', retryable: false } }]);
    const transport = new DefaultChatTransport({ api: `${url}/api/chat?plugin=tracer` });
    const errors: string[] = [];
    let failed: UIMessage | undefined;
    const stream = await transport.sendMessages({
      chatId: 'fails',
      messages: [userMessage('x')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    for await (const m of readUIMessageStream({ stream, onError: (e) => errors.push((e as Error).message) })) failed = m;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/bad key|auth/);
    expect(failed!.metadata).toMatchObject({ status: 'failed' });
    await service!.close();
    await server!.close();
    rmSync(dir, { recursive: true, force: true });

    const url2 = await start(() => [{ text: 'never ends', delayMs: 60_000 }]);
    const res = await fetch(`${url2}/api/chat?plugin=tracer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'cancel-me', messages: [userMessage('x')] }),
    });
    const runId = res.headers.get('x-runtrail-run-id')!;
    await expect.poll(async () => (await service!.get(runId))?.status).toBe('model_thinking');
    await service!.cancel(runId);
    const chunks = (await res.text())
      .split('\n\n')
      .filter((b) => b.startsWith('data: {'))
      .map((b) => JSON.parse(b.slice(6)) as { type: string; messageMetadata?: { status?: string } });
    expect(chunks.slice(-2).map((c) => c.type)).toEqual(['message-metadata', 'abort']);
    expect(chunks.at(-2)!.messageMetadata!.status).toBe('cancelled');
  });
});

describe('GET /api/chat/:id/stream', () => {
  it("resumes a live run's message after the client left (the run goes on), and is 204 once nothing is live", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const url = await start(() => [{ text: words, chunkDelayMs: 15 }]);
    const transport = new DefaultChatTransport({ api: `${url}/api/chat?plugin=tracer` });
    const ctrl = new AbortController();
    const stream = await transport.sendMessages({
      chatId: 'resume-me',
      messages: [userMessage('talk')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: ctrl.signal,
    });
    // read a little, then leave
    let seen = '';
    try {
      for await (const m of readUIMessageStream({ stream })) {
        seen = m.parts
          .filter((p) => p.type === 'text')
          .map((p) => p.text)
          .join('');
        if (seen.includes('w5')) ctrl.abort();
      }
    } catch {
      // the aborted fetch
    }
    expect(seen).toContain('w5');
    expect(seen).not.toBe(words);
    const [run] = (await service!.list()).runs;
    expect(run.status).not.toBe('cancelled');

    // useChat's resumeStream(): the whole message again, from its start, to its end
    const resumed = await transport.reconnectToStream({ chatId: 'resume-me' });
    expect(resumed).not.toBeNull();
    const msg = await lastOf(resumed!);
    expect(msg.id).toBe(run.run_id);
    expect(msg.parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual([words]);
    expect((await service!.wait(run.run_id)).status).toBe('completed');

    expect(await transport.reconnectToStream({ chatId: 'resume-me' })).toBeNull();
    expect(await transport.reconnectToStream({ chatId: 'never-was' })).toBeNull();
    expect((await fetch(`${url}/api/chat/a..b/stream`)).status).toBe(400);
  });

  it('through AbstractChat (what useChat wraps): resumeStream() on a fresh client rebuilds the live message', async () => {
    const url = await start(() => [{ text: 'one two three four five six', chunkDelayMs: 40 }]);
    const sender = new TestChat({ id: 'reload', transport: new DefaultChatTransport({ api: `${url}/api/chat?plugin=tracer` }) });
    const sending = sender.sendMessage({ text: 'count' });
    await expect.poll(async () => (await service!.list()).total).toBe(1);
    await sender.stop();
    await sending;
    // a page reload: a new client with the user's message only, resuming
    const reloaded = new TestChat({ id: 'reload', transport: new DefaultChatTransport({ api: `${url}/api/chat?plugin=tracer` }) });
    reloaded.messages = [userMessage('count')];
    await reloaded.resumeStream();
    expect(reloaded.status).toBe('ready');
    expect(reloaded.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(reloaded.lastMessage!.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'one two three four five six', state: 'done' });
  });
});

describe('approvals over the chat protocol', () => {
  const careful = (): Agent => ({ ...tracePlugin({ toolMs: 10 }), name: 'careful', permissions: { lookup: 'ask' } });
  const turns = () => [{ toolCalls: [{ name: 'lookup', args: { q: 'tiny' } }] }, { text: 'done looking' }];

  it('a waiting call is a tool-approval-request; approving it in the client decides it on the run and the message goes on', async () => {
    const url = await start(turns, [careful()]);
    const chat = new TestChat({
      id: 'approve-me',
      transport: new DefaultChatTransport({ api: `${url}/api/chat?plugin=careful` }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: 'look it up' });
    const asked = chat.lastMessage!.parts.find((p) => p.type === 'dynamic-tool')!;
    expect(asked).toMatchObject({ toolName: 'lookup', state: 'approval-requested', approval: { id: expect.stringMatching(/\S/) } });
    const [run] = (await service!.list()).runs;
    expect(run.status).toBe('awaiting_approval');

    await chat.addToolApprovalResponse({ id: (asked as { approval: { id: string } }).approval.id, approved: true });
    await expect.poll(() => chat.status, { timeout: 10_000 }).toBe('ready');
    const final = chat.lastMessage!;
    expect(chat.messages).toHaveLength(2);
    expect(final.id).toBe(run.run_id);
    expect(final.parts.filter((p) => p.type === 'dynamic-tool').map((p) => [p.toolName, p.state])).toEqual([['lookup', 'output-available']]);
    expect(final.parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(['done looking']);
    expect((await service!.wait(run.run_id)).status).toBe('completed');
    const events = [];
    for await (const e of service!.events(run.run_id)) if (e.stream === 'tool' && e.data.phase === 'approval') events.push(e.data.approval);
    expect(events.map((a) => [a.status, a.by])).toEqual([
      ['pending', undefined],
      ['approved', 'web'],
    ]);
  });

  it('a denial in the client is a denied tool part; the model is told and answers', async () => {
    const url = await start(() => [{ toolCalls: [{ name: 'lookup', args: { q: 'tiny' } }] }, { text: 'I will not look it up then' }], [careful()]);
    const chat = new TestChat({
      id: 'deny-me',
      transport: new DefaultChatTransport({ api: `${url}/api/chat?plugin=careful` }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: 'look it up' });
    const asked = chat.lastMessage!.parts.find((p) => p.type === 'dynamic-tool') as { approval: { id: string } };
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: false, reason: 'not now' });
    await expect.poll(() => chat.status, { timeout: 10_000 }).toBe('ready');
    const final = chat.lastMessage!;
    expect(final.parts.filter((p) => p.type === 'dynamic-tool').map((p) => p.state)).toEqual(['output-denied']);
    expect(final.parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(['I will not look it up then']);
    // an answer to an approval no live run waits for is refused, naming it
    const late = structuredClone(chat.messages);
    Object.assign(late[1].parts.find((p) => p.type === 'dynamic-tool')!, { state: 'approval-responded', approval: { id: asked.approval.id, approved: true } });
    const again = await fetch(`${url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'deny-me', messages: late }),
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain(asked.approval.id);
  });
});
