/** GET /api/runs for the runs list (usage columns, model / goal / conversation filters), /config, and the trace view's messages. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { goodTurns } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../runtime/fixtures/setup.js';
import { getJson } from './helpers.js';

let env: TestEnv;
let svc: RunService | null = null;
let server: RunningServer | null = null;
beforeEach(() => {
  env = makeEnv();
});
afterEach(async () => {
  await server?.close();
  await svc?.close();
  server = null;
  svc = null;
  env.cleanup();
});

describe('the runs list API', () => {
  it('gives each run its duration, tokens and cost, and filters by model, goal words and conversation', async () => {
    svc = makeService(env, () => new FakeProvider(goodTurns()));
    server = await startServer({ service: svc, port: 0, env: {}, logger: false });
    const a = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'Count the SYNC notes' });
    await svc.wait(a.run_id);
    const b = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count again', conversation_id: 'talk-1' });
    await svc.wait(b.run_id);
    const all = (await getJson(`${server.url}/api/runs`)).body as {
      runs: Array<{ run_id: string; usage: { duration_ms: number; tokens: number; cost_usd: number | null; model_calls: number } }>;
    };
    expect(all.runs).toHaveLength(2);
    // FakeProvider: 10 in + 5 out per call, 3 calls
    for (const r of all.runs) expect(r.usage).toMatchObject({ tokens: 45, model_calls: 3, cost_usd: null, duration_ms: expect.any(Number) });
    const ids = async (q: string) => ((await getJson(`${server!.url}/api/runs?${q}`)).body as { runs: Array<{ run_id: string }> }).runs.map((r) => r.run_id);
    expect(await ids('q=sync')).toEqual([a.run_id]);
    expect(await ids('model=fake:fake-1')).toHaveLength(2);
    expect(await ids('model=fake-1')).toHaveLength(2);
    expect(await ids('model=openai:gpt-4o')).toEqual([]);
    expect(await ids('conversation=talk-1')).toEqual([b.run_id]);
    const long = await getJson(`${server.url}/api/runs?q=${'x'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toContain('q');
    const cfg = (await getJson(`${server.url}/api/runs/${a.run_id}/config`)).body as { config: { capture: unknown; limits: unknown } };
    expect(cfg.config).toMatchObject({ capture: { model_io: true }, limits: { max_iterations: 20 } });
    expect((await getJson(`${server.url}/api/runs/run_20000101_000000_000000/config`)).status).toBe(404);
  });

  it('the trace view lists the messages people sent a live run, and when the model read them', async () => {
    svc = makeService(env, () => new FakeProvider(goodTurns()));
    server = await startServer({ service: svc, port: 0, env: {}, logger: false });
    const run = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count' });
    const sent = await fetch(`${server.url}/api/runs/${run.run_id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-runtrail-client': 'web' },
      body: JSON.stringify({ text: 'faster please', mode: 'steer' }),
    });
    expect(sent.status).toBe(202);
    await svc.wait(run.run_id);
    const view = (await getJson(`${server.url}/api/runs/${run.run_id}/trace`)).body as {
      messages: Array<{ text: string; mode: string; from: string; at_ms: number; delivered_ms: number | null }>;
    };
    expect(view.messages).toEqual([expect.objectContaining({ text: 'faster please', mode: 'steer', from: 'web' })]);
    expect(view.messages[0].delivered_ms).toBeGreaterThanOrEqual(view.messages[0].at_ms);
  });
});
