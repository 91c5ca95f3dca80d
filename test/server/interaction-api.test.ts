/** A person in the loop over HTTP and the IM endpoint: approvals decided by a person, messages to a live run. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { eventually } from '../tools/helpers.js';
import { getJson, postJson, readSse, startTestServer, type TestServer } from './helpers.js';

let p: ProjectFixture;
let service: RunService;
let server: TestServer;
afterEach(async () => {
  await server?.stop();
  await service?.close();
  p?.cleanup();
});

async function serve(turns: unknown[]) {
  p = makeProject({
    '.runtrail/agents/careful.md': agentFile('name: careful\ndescription: asks first\nmodel: script:careful.turns.json\npermissions: { write_artifact: ask }'),
    '.runtrail/agents/careful.turns.json': JSON.stringify(turns),
  });
  const registry = await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none') });
  service = new RunService({ dataDir: join(p.dir, '.runtrail'), agentSource: registry, env: {}, cwd: p.dir, processRegistry: null });
  server = await startTestServer(service, { dataDir: join(p.dir, '.runtrail') });
}

const WRITE = { toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] };

async function pendingOf(runId: string): Promise<string> {
  let id = '';
  await eventually(() => {
    void getJson(`${server.url}/api/runs/${runId}/approvals`).then((r) => (id = r.body.approvals?.[0]?.id ?? ''));
    return id !== '';
  });
  return id;
}

describe('approvals over HTTP', () => {
  it('POST /api/runs/:id/approvals/:id decides; the SSE step carries the approval; again is 409, unknown 404', async () => {
    await serve([WRITE, { text: 'written' }]);
    const run = await postJson(`${server.url}/api/runs`, { plugin: 'careful', input: {} });
    const runId = run.body.run_id as string;
    const id = await pendingOf(runId);
    expect(id).toMatch(/^apr_/);
    expect((await getJson(`${server.url}/api/runs/${runId}`)).body.status).toBe('awaiting_approval');
    expect((await postJson(`${server.url}/api/runs/${runId}/approvals/apr_0000000000`, { decision: 'approve' })).status).toBe(404);
    expect((await postJson(`${server.url}/api/runs/${runId}/approvals/${id}`, { decision: 'sure' })).status).toBe(400);
    const ok = await postJson(`${server.url}/api/runs/${runId}/approvals/${id}`, { decision: 'approve' }, { 'x-runtrail-client': 'web' });
    expect(ok.status).toBe(200);
    expect(ok.body.approval).toMatchObject({ id, status: 'approved', by: 'web' });
    const sse = await readSse(`${server.url}/api/runs/${runId}/events`);
    const frames = sse.events.map((e) => JSON.parse(e.data) as { type: string; step?: { name?: string; phase?: string; approval?: { status: string } } });
    const write = frames.filter((f) => f.type === 'step' && f.step?.name === 'write_artifact').map((f) => [f.step!.phase, f.step!.approval?.status]);
    expect(write).toEqual([
      ['start', undefined],
      ['start', 'pending'],
      ['start', 'approved'],
      ['ok', 'approved'],
    ]);
    expect(frames.at(-1)!.type).toBe('done');
    const again = await postJson(`${server.url}/api/runs/${runId}/approvals/${id}`, { decision: 'deny' });
    expect(again.status).toBe(409);
  });

  it('POST /api/runs/:id/messages queues a steer (202); a finished run answers 409', async () => {
    await serve([WRITE, { text: 'done' }]);
    const runId = (await postJson(`${server.url}/api/runs`, { plugin: 'careful', input: {} })).body.run_id as string;
    const id = await pendingOf(runId);
    const sent = await postJson(`${server.url}/api/runs/${runId}/messages`, { text: 'keep it short', mode: 'steer' });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ mode: 'steer', id: expect.stringMatching(/^msg_/) });
    expect((await postJson(`${server.url}/api/runs/${runId}/messages`, { mode: 'steer' })).status).toBe(400);
    await postJson(`${server.url}/api/runs/${runId}/approvals/${id}`, { decision: 'deny', reason: 'no' });
    await service.wait(runId);
    const late = await postJson(`${server.url}/api/runs/${runId}/messages`, { text: 'x' });
    expect(late.status).toBe(409);
  });
});

describe('approvals and steering from a chat', () => {
  it("the IM reply asks for the approval; /approve answers with the run's result; other text steers a live run", async () => {
    await serve([WRITE, { text: 'all written' }]);
    const im = (text: string) => postJson(`${server.url}/api/im/messages`, { conversation_id: 'chat-7', text });
    const first = await im('/run careful -- write it');
    expect(first.body.status).toBe('awaiting_approval');
    const approvalId = first.body.approval_id as string;
    expect(first.body.messages.join('\n')).toContain(`/approve ${approvalId}`);
    const steer = await im('and mind the tone');
    expect(steer.body.messages[0]).toMatch(/^Sent to run run_\S+: it reaches the agent at its next step\.$/);
    const done = await im(`/approve ${approvalId}`);
    expect(done.body.status).toBe('completed');
    expect(done.body.messages.join('\n')).toContain('all written');
    expect((await im(`/approve ${approvalId}`)).body.messages[0]).toMatch(/No live run in this conversation waits for/);
  });
});
