/**
 * Completion webhooks against a real receiver on loopback: Standard Webhooks signatures verified with
 * the `standardwebhooks` package, retries, attempt lines, redelivery, refused addresses, a receiver
 * that never answers, and a wait for approval.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { TriggerHost } from '../../src/triggers/trigger-host.js';
import { triggerConfig } from '../../src/triggers/trigger-config.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { getJson, postJson } from '../server/helpers.js';
import { Receiver } from './receiver.js';
import { removeDir, startStack, type Stack } from './helpers.js';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

let stack: Stack | null = null;
let receiver: Receiver | null = null;
let project: ProjectFixture | null = null;
afterEach(async () => {
  await stack?.stop();
  await receiver?.stop();
  removeDir(stack?.dataDir ?? '');
  project?.cleanup();
  stack = null;
  receiver = null;
  project = null;
});

const quickRetry = { base: '100ms', max_interval: '1s', for: '1m' };

describe('completion webhooks', () => {
  it('a receiver answering 500, 500, 200 gets three signed attempts of one message; one delivery is recorded', async () => {
    receiver = await new Receiver().start();
    receiver.answers = [500, 500, 200];
    stack = await startStack({ config: { webhooks: { allow: [`http://127.0.0.1:${receiver.port}/*`], retry: quickRetry } } });
    const created = await postJson(`${stack.url}/api/runs`, { plugin: 'talk', goal: 'say hi', webhook: { url: receiver.url(), secret: SECRET } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    await vi.waitFor(() => expect(receiver!.got).toHaveLength(3), { timeout: 15_000 });
    const wh = new Webhook(SECRET);
    const ids = new Set<string>();
    for (const r of receiver.got) {
      // what any Standard Webhooks library does on the receiving side
      const payload = wh.verify(r.body, r.headers) as {
        type: string;
        data: { run_id: string; status: string; final_answer: string };
        links: Record<string, string>;
      };
      expect(payload.type).toBe('run.completed');
      expect(payload.data).toMatchObject({ run_id: runId, status: 'completed', final_answer: 'ok' });
      expect(payload.links.run).toBe(`${stack.url}/api/runs/${runId}`);
      ids.add(r.headers['webhook-id']);
    }
    expect(ids.size).toBe(1);
    // a body that was changed on the way does not verify
    expect(() => wh.verify(receiver!.got[2].body.replace('completed', 'failed'), receiver!.got[2].headers)).toThrow();

    await vi.waitFor(async () => expect((await getJson(`${stack!.url}/api/runs/${runId}/webhooks`)).body.messages[0]?.state).toBe('delivered'));
    const view = (await getJson(`${stack.url}/api/runs/${runId}/webhooks`)).body;
    expect(view.messages).toEqual([expect.objectContaining({ webhook_id: [...ids][0], type: 'run.completed', state: 'delivered', attempts: 3 })]);
    expect(view.attempts.map((a: { outcome: string; http_status: number }) => [a.outcome, a.http_status])).toEqual([
      ['retry', 500],
      ['retry', 500],
      ['delivered', 200],
    ]);
    expect(view.targets).toEqual([{ url: receiver.url(), source: 'run', signed: true }]);
    const lines = readFileSync(join(stack.dataDir, 'runs', runId, 'runtime', 'webhooks.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2])).toMatchObject({ webhook_id: [...ids][0], attempt: 3, address: '127.0.0.1', outcome: 'delivered' });
    // the secret is in no file of the run
    for (const f of ['runtime/webhooks.jsonl', 'runtime/run_status.json', 'input/request.json', 'runtime/events.jsonl']) {
      expect(readFileSync(join(stack.dataDir, 'runs', runId, f), 'utf8')).not.toContain(SECRET.slice(6, 20));
    }

    // redelivery: the same message (webhook-id), signed again
    const again = await postJson(`${stack.url}/api/runs/${runId}/webhooks/redeliver`, {});
    expect(again.status).toBe(202);
    await vi.waitFor(() => expect(receiver!.got).toHaveLength(4));
    expect(receiver.got[3].headers['webhook-id']).toBe([...ids][0]);
    expect(() => wh.verify(receiver!.got[3].body, receiver!.got[3].headers)).not.toThrow();
    await vi.waitFor(async () =>
      expect((await getJson(`${stack!.url}/api/runs/${runId}/webhooks`)).body.attempts.at(-1)).toMatchObject({ outcome: 'delivered', redelivery: true }),
    );
  });

  it('a delivery still failing when the server stops is retried by the next one on the data dir, as the same message', async () => {
    receiver = await new Receiver().start();
    receiver.answers = [500];
    const config = { webhooks: { allow: [`http://127.0.0.1:${receiver.port}/*`], retry: { base: '2s', max_interval: '2s', for: '1m' } } };
    const first = await startStack({ config });
    stack = first;
    const created = await postJson(`${first.url}/api/runs`, { plugin: 'talk', goal: 'say hi', webhook: { url: receiver.url(), secret: SECRET } });
    const runId = created.body.run_id as string;
    await vi.waitFor(async () => expect((await getJson(`${first.url}/api/runs/${runId}/webhooks`)).body.attempts).toHaveLength(1), { timeout: 10_000 });
    await first.stop();
    // the stopped server hands its message back: the next one takes it up when it is due, not when a lease runs out
    const open = JSON.parse(readFileSync(join(first.dataDir, 'webhooks', 'open', `${runId}.json`), 'utf8')) as {
      messages: Array<{ state: string; lease_owner?: string; next_attempt_at: number }>;
    };
    expect(open.messages).toEqual([expect.objectContaining({ state: 'pending', attempts: 1 })]);
    expect(open.messages[0].lease_owner).toBeUndefined();

    stack = await startStack({ config, dataDir: first.dataDir });
    await vi.waitFor(() => expect(receiver!.got).toHaveLength(2), { timeout: 15_000 });
    expect(receiver.got[1].headers['webhook-id']).toBe(receiver.got[0].headers['webhook-id']);
    expect(() => new Webhook(SECRET).verify(receiver!.got[1].body, receiver!.got[1].headers)).not.toThrow();
    // not before its time: the second attempt waits out the retry delay the first one set
    expect(receiver.got[1].at).toBeGreaterThanOrEqual(open.messages[0].next_attempt_at);
    await vi.waitFor(async () => expect((await getJson(`${stack!.url}/api/runs/${runId}/webhooks`)).body.messages[0].state).toBe('delivered'));
    const view = (await getJson(`${stack.url}/api/runs/${runId}/webhooks`)).body;
    expect(view.attempts.map((a: { outcome: string; attempt: number }) => [a.attempt, a.outcome])).toEqual([
      [1, 'retry'],
      [2, 'delivered'],
    ]);
  });

  it('a receiver that never answers does not hold up the end of the run; its attempt times out and is retried', async () => {
    receiver = await new Receiver().start();
    receiver.answers = ['hang', 200];
    stack = await startStack({ config: { webhooks: { allow: [`http://127.0.0.1:${receiver.port}`], retry: quickRetry, timeout: '1500ms' } } });
    const created = await postJson(`${stack.url}/api/runs`, { plugin: 'talk', goal: 'say hi', webhook: { url: receiver.url('/slow') } });
    const runId = created.body.run_id as string;
    const final = await stack.service.wait(runId);
    expect(final.status).toBe('completed');
    // the run has ended while its message waits on the receiver
    await vi.waitFor(() => expect(receiver!.got).toHaveLength(1));
    const during = (await getJson(`${stack.url}/api/runs/${runId}/webhooks`)).body;
    expect(during.messages[0]).toMatchObject({ state: 'pending', attempts: 0 });
    expect((await getJson(`${stack.url}/api/runs/${runId}`)).body.status).toBe('completed');
    await vi.waitFor(async () => expect((await getJson(`${stack!.url}/api/runs/${runId}/webhooks`)).body.messages[0].state).toBe('delivered'), {
      timeout: 10_000,
    });
    const attempts = (await getJson(`${stack.url}/api/runs/${runId}/webhooks`)).body.attempts;
    expect(attempts[0]).toMatchObject({ outcome: 'retry', error: 'no answer within 1500 ms' });
    expect(attempts[1]).toMatchObject({ outcome: 'delivered', http_status: 200 });
  });

  it('a name that resolves to a loopback address is refused at each attempt unless webhooks.allow names it', async () => {
    receiver = await new Receiver().start();
    stack = await startStack({ config: { webhooks: { retry: { base: '100ms', max_interval: '200ms', for: '1s' } } } });
    // no allow list: any public address; localhost is not one, whatever the request says
    const created = await postJson(`${stack.url}/api/runs`, { plugin: 'talk', goal: 'hi', webhook: { url: `http://localhost:${receiver.port}/hook` } });
    expect(created.status).toBe(201);
    const runId = created.body.run_id as string;
    await vi.waitFor(async () => expect((await getJson(`${stack!.url}/api/runs/${runId}/webhooks`)).body.messages[0]?.state).toBe('failed'), {
      timeout: 10_000,
    });
    const view = (await getJson(`${stack.url}/api/runs/${runId}/webhooks`)).body;
    expect(view.attempts.length).toBeGreaterThanOrEqual(2);
    expect(view.attempts[0].error).toMatch(/localhost resolves to no public address \(127\.0\.0\.1 is a loopback address\)/);
    expect(receiver.got).toEqual([]);
    // an IP literal is refused at once: 400, nothing created
    const before = (await getJson(`${stack.url}/api/runs`)).body.total;
    const refused = await postJson(`${stack.url}/api/runs`, { plugin: 'talk', webhook: { url: `http://127.0.0.1:${receiver.port}/hook` } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.issues[0]).toMatchObject({ path: 'webhook.url', message: expect.stringMatching(/127\.0\.0\.1 is a loopback address/) });
    expect((await getJson(`${stack.url}/api/runs`)).body.total).toBe(before);
  });

  it('bad webhooks on POST /api/runs and /api/chat are 400s naming the field, and create nothing', async () => {
    stack = await startStack({ config: { webhooks: { allow: ['https://hooks.example.com/*'] } } });
    const cases: Array<[unknown, string, RegExp]> = [
      [{ url: 'ftp://hooks.example.com/x' }, 'webhook.url', /http or https/],
      [{ url: 'https://evil.example.net/x' }, 'webhook.url', /not allowed by webhooks.allow/],
      [{ url: 'https://hooks.example.com/x', secret: 'whsec_short' }, 'webhook.secret', /base64|bytes/],
      [{ url: 'https://hooks.example.com/x', secret: 'plain-text-secret-of-some-length' }, 'webhook.secret', /whsec_/],
      ['https://hooks.example.com/x', 'webhook', /object/],
    ];
    for (const [webhook, path, message] of cases) {
      const r = await postJson(`${stack.url}/api/runs`, { plugin: 'talk', webhook });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.details.issues[0]).toMatchObject({ path, message: expect.stringMatching(message) });
      const c = await postJson(`${stack.url}/api/chat?plugin=talk`, {
        id: 'chat-1',
        messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
        webhook,
      });
      expect(c.status, JSON.stringify(c.body)).toBe(400);
      expect(c.body.error.details.issues[0].path).toBe(path);
    }
    expect((await getJson(`${stack.url}/api/runs`)).body.total).toBe(0);
  });

  it('config.json webhooks.every_run hears of every run, /api/chat runs included', async () => {
    receiver = await new Receiver().start();
    stack = await startStack({
      config: { webhooks: { allow: [`http://127.0.0.1:${receiver.port}/*`], every_run: [{ url: receiver.url('/all'), secret: SECRET }], retry: quickRetry } },
    });
    const res = await fetch(`${stack.url}/api/chat?plugin=talk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'chat-2', messages: [{ role: 'user', parts: [{ type: 'text', text: 'hello' }] }] }),
    });
    await res.text();
    const runId = res.headers.get('x-runtrail-run-id')!;
    await vi.waitFor(() => expect(receiver!.got).toHaveLength(1));
    const body = new Webhook(SECRET).verify(receiver.got[0].body, receiver.got[0].headers) as {
      type: string;
      data: { run_id: string; conversation_id: string };
    };
    expect(body).toMatchObject({ type: 'run.completed', data: { run_id: runId, conversation_id: 'chat-2' } });
  });

  it('a run that waits for approval sends run.awaiting_approval (with the pending call), then its end, each with its own webhook-id', async () => {
    receiver = await new Receiver().start();
    project = makeProject({
      '.runtrail/agents/careful.md': agentFile(
        'name: careful\ndescription: asks first\nmodel: script:careful.turns.json\npermissions: { write_artifact: ask }',
      ),
      '.runtrail/agents/careful.turns.json': JSON.stringify([
        { toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] },
        { text: 'written' },
      ]),
    });
    const registry = await ExtensionRegistry.load({ projectDir: project.dir, builtins: [], builtinSkillsDir: join(project.dir, 'none') });
    const dataDir = join(project.dir, '.runtrail');
    const config = triggerConfig({ webhooks: { allow: [`http://127.0.0.1:${receiver.port}/*`], retry: quickRetry } }).config;
    const triggers = new TriggerHost({ dataDir, agents: () => registry.names(), config: () => config, sweepMs: 500 });
    const service = new RunService({ dataDir, agentSource: registry, env: {}, cwd: project.dir, processRegistry: null, observers: [triggers.observer] });
    await triggers.start(service);
    try {
      const run = await service.create({ plugin: 'careful', input: {} }, { webhook: { url: receiver.url(), secret: SECRET } });
      await vi.waitFor(() => expect(receiver!.got).toHaveLength(1), { timeout: 10_000 });
      const wh = new Webhook(SECRET);
      const asked = wh.verify(receiver.got[0].body, receiver.got[0].headers) as {
        type: string;
        data: { status: string; pending_approvals: Array<{ id: string; tool: string }> };
      };
      expect(asked.type).toBe('run.awaiting_approval');
      expect(asked.data.status).toBe('awaiting_approval');
      expect(asked.data.pending_approvals[0]).toMatchObject({ tool: 'write_artifact', status: 'pending' });
      await service.decideApproval(run.run_id, asked.data.pending_approvals[0].id, { decision: 'approve', by: 'api' });
      await vi.waitFor(() => expect(receiver!.got).toHaveLength(2), { timeout: 10_000 });
      const ended = wh.verify(receiver.got[1].body, receiver.got[1].headers) as { type: string };
      expect(ended.type).toBe('run.completed');
      expect(receiver.got[0].headers['webhook-id']).not.toBe(receiver.got[1].headers['webhook-id']);
    } finally {
      await triggers.stop();
      await service.close();
    }
  });
});
