import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent } from '../../src/runtime/agent.js';
import { parseImCommand } from '../../src/server/im-command.js';
import { splitReply } from '../../src/server/im-reply.js';
import { FakeRunService } from './fake-run-service.js';
import { postJson, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const echoPlugin = {
  name: 'echo',
  version: '1.0.0',
  description: 'echo',
  inputSchema: z.object({ product_name: z.string().optional(), max_rows: z.number().int().optional(), loud: z.boolean().optional() }),
  fileInputs: [],
  defaultSkill: null,
  defaultGoal: 'echo',
  promptFragments: [],
  createTools: () => [],
  plan: [],
  artifacts: [],
  validators: [],
  offlineProcedure: () => ({ text: 'ok' }),
} as unknown as Agent;

function fenceBalanced(s: string): boolean {
  return (s.match(/^```/gm) ?? []).length % 2 === 0;
}

describe('IM endpoint', () => {
  it('parses /run with quoted values and a goal, /runs, /cancel, /help, and plain text', () => {
    expect(parseImCommand('/run echo product_name="Task Flow" max_rows=5 -- find the top issues')).toEqual({
      kind: 'run',
      plugin: 'echo',
      input: { product_name: 'Task Flow', max_rows: '5' },
      goal: 'find the top issues',
    });
    expect(parseImCommand('/runs')).toEqual({ kind: 'runs' });
    expect(parseImCommand('/cancel run_1')).toEqual({ kind: 'cancel', runId: 'run_1' });
    expect(parseImCommand('/HELP')).toEqual({ kind: 'help' });
    expect(parseImCommand('how are you?')).toEqual({ kind: 'chat', text: 'how are you?' });
    expect(parseImCommand('/run').kind).toBe('invalid');
    expect(parseImCommand('/run echo novalue').kind).toBe('invalid');
    expect(parseImCommand('/run echo a="open').kind).toBe('invalid');
    expect(parseImCommand('/frobnicate').kind).toBe('invalid');
  });

  it('starts a plugin with /run (values typed by the input schema) and answers with the assembled reply', async () => {
    const service = new FakeRunService();
    const seen: Array<Record<string, unknown>> = [];
    service.scriptFor = (req) => {
      seen.push(req);
      return { deltas: ['Top issue: ', 'sync.'], tool: true };
    };
    server = await startTestServer(service, { agents: [echoPlugin] });
    const r = await postJson(`${server.url}/api/im/messages`, {
      conversation_id: 'chat-1',
      text: '/run echo product_name="Task Flow" max_rows=5 loud=true -- find issues',
    });
    expect(r.status).toBe(200);
    expect(r.body.messages).toEqual(['Top issue: sync.']);
    expect(r.body.status).toBe('completed');
    expect(seen[0]).toEqual({ plugin: 'echo', input: { product_name: 'Task Flow', max_rows: 5, loud: true }, conversation_id: 'chat-1', goal: 'find issues' });

    const chat = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'chat-1', text: 'hello there' });
    expect(seen[1]).toMatchObject({ plugin: 'chat', goal: 'hello there', conversation_id: 'chat-1' });
    expect(chat.body.messages).toEqual(['Top issue: sync.']);

    const runs = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'chat-1', text: '/runs' });
    expect(runs.body.messages[0].split('\n')).toHaveLength(2);
    const other = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'chat-2', text: '/runs' });
    expect(other.body.messages[0]).toMatch(/No runs/);
    const help = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'chat-2', text: '/help' });
    expect(help.body.messages[0]).toContain('/run <plugin>');
    const unknown = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'chat-2', text: '/run nope -- x' });
    expect(unknown.body.messages[0]).toMatch(/Cannot start nope/);
  });

  it('/cancel stops the live run of the conversation', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: ['a', 'b'], pauseAfter: 1 });
    server = await startTestServer(service, { agents: [echoPlugin], imWaitMs: 50 });
    const started = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'c', text: '/run echo -- wait' });
    expect(started.body.messages[0]).toMatch(/still running/);
    const c = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'c', text: '/cancel' });
    expect(c.body.messages[0]).toBe(`Run ${started.body.run_id} is cancelled.`);
    expect((await service.get(started.body.run_id))!.status).toBe('cancelled');
    const none = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'c', text: '/cancel' });
    expect(none.body.messages[0]).toBe('No live run to cancel.');
  });

  it('splits a long reply to the channel limit without breaking code fences', async () => {
    const code = '```ts\n' + Array.from({ length: 60 }, (_, i) => `const v${i} = ${i};`).join('\n') + '\n```';
    const text = `Intro paragraph.\n\n${'Words and more words. '.repeat(30)}\n\n${code}\n\nOutro.`;
    const parts = splitReply(text, 400);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(400 + 20); // a reopened fence line may ride along
      expect(fenceBalanced(p)).toBe(true);
    }
    expect(
      parts
        .join('')
        .replace(/```ts\n|```\n?/g, '')
        .replace(/\s+/g, ' '),
    ).toContain('const v59 = 59;');
    expect(splitReply('short', 4000)).toEqual(['short']);

    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: [text] });
    server = await startTestServer(service, { agents: [echoPlugin], imMessageLimit: 400 });
    const r = await postJson(`${server.url}/api/im/messages`, { conversation_id: 'c', text: '/run echo -- long' });
    expect(r.body.messages.length).toBeGreaterThan(2);
    expect(r.body.messages.every((m: string) => fenceBalanced(m))).toBe(true);
  });

  it('rejects a bad body with 400 naming the field', async () => {
    server = await startTestServer(new FakeRunService());
    const cases: Array<[unknown, string]> = [
      [{ text: 'hi' }, 'conversation_id'],
      [{ conversation_id: 'c' }, 'text'],
      [{ conversation_id: 'a b/c', text: 'hi' }, 'conversation_id'],
      [{ conversation_id: 'c', text: 5 }, 'text'],
      [{ conversation_id: 'c', text: 'x'.repeat(20_001) }, 'text'],
    ];
    for (const [body, field] of cases) {
      const r = await postJson(`${server.url}/api/im/messages`, body);
      expect(r.status).toBe(400);
      expect(r.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(field);
      expect(r.body.error.message).toContain(field);
    }
  });
});
