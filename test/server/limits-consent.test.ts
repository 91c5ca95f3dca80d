/** A request over HTTP may lower an agent's limits; raising them needs the operator's consent in config.json. */
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import type { RunLimits } from '../../src/runtime/run-service-types.js';
import { postJson, startRealServer, type RealTestServer } from './helpers.js';

let server: RealTestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(config: { request_limits?: Partial<RunLimits> } = {}): Promise<string> {
  const plain = createTextOnlyPlugin({ name: 'talk', description: 'no limits of its own', inputSchema: z.object({}).passthrough(), offlineAnswer: 'hi' });
  const long = {
    ...createTextOnlyPlugin({ name: 'long', description: 'a long worker', inputSchema: z.object({}).passthrough(), offlineAnswer: 'hi' }),
    limits: { max_tool_calls: 300, timeout_s: 3600 },
  };
  server = await startRealServer({ agents: [plain, long], defaults: () => config });
  return server.url;
}

describe('request limits', () => {
  it("above the agent's own are refused without the operator's consent, naming the limit; no run is made", async () => {
    const url = await start();
    const r = await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, limits: { max_tool_calls: 1000, timeout_s: 86_400 } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("limits.max_tool_calls: 1000 is above the agent's own 60");
    expect(r.body.error.message).toContain('"request_limits": { "max_tool_calls": 1000 }');
    expect(r.body.error.details.issues[0].path).toBe('limits.max_tool_calls');
    const t = await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, limits: { timeout_s: 86_400 } });
    expect(t.status).toBe(400);
    expect(t.body.error.message).toContain("limits.timeout_s: 86400 is above the agent's own 600");
    expect((await server!.service.list()).total).toBe(0);
  });

  it("at or below the agent's own are fine, the agent's own being its definition's", async () => {
    const url = await start();
    expect((await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, limits: { max_tool_calls: 10, timeout_s: 600 } })).status).toBe(201);
    expect((await postJson(`${url}/api/runs`, { plugin: 'long', input: {}, limits: { max_tool_calls: 300, timeout_s: 1800 } })).status).toBe(201);
    expect((await postJson(`${url}/api/runs`, { plugin: 'long', input: {}, limits: { max_tool_calls: 301 } })).status).toBe(400);
  });

  it("up to config.json's request_limits with the operator's consent, and not past it", async () => {
    const url = await start({ request_limits: { max_tool_calls: 500, timeout_s: 7200 } });
    expect((await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, limits: { max_tool_calls: 500, timeout_s: 7200 } })).status).toBe(201);
    const over = await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, limits: { max_tool_calls: 501 } });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain('limits.max_tool_calls: 501 is above what the operator allows a request (500');
  });

  it('a local caller (the CLI) is the operator: its limits are not refused', async () => {
    await start();
    const run = await server!.service.create({ plugin: 'talk', input: {}, limits: { max_tool_calls: 1000 } });
    expect(run.status).toBe('queued');
  });
});
