/** POST /api/runs with `reasoning` and `limits.context_tokens`; GET /metrics counts the model's tokens. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunService } from '../../src/runtime/service/run-service.js';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import type { ModelRequest } from '../../src/providers/model-provider.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { getJson, postJson } from './helpers.js';

let server: RunningServer | null = null;
let service: RunService | null = null;
let dataDir = '';
afterEach(async () => {
  await server?.close();
  await service?.close();
  server = null;
  service = null;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function start(seen: ModelRequest[]): Promise<string> {
  dataDir = mkdtempSync(join(tmpdir(), 'runtrail-model-opts-'));
  service = new RunService({
    dataDir,
    agents: [createTextOnlyPlugin({ name: 'talk', description: 'talks', offlineAnswer: 'hi' })],
    env: {},
    providerResolver: () => {
      const p = createScriptProvider([{ text: 'Sync failures.' }]);
      const stream = p.stream.bind(p);
      p.stream = (req) => {
        seen.push(req);
        return stream(req);
      };
      return p;
    },
  });
  server = await startServer({ service, port: 0, dataDir, env: {} });
  return server.url;
}

describe('run API: reasoning and context_tokens', () => {
  it('takes reasoning and limits.context_tokens from the body to the model, and /metrics counts the tokens', async () => {
    const seen: ModelRequest[] = [];
    const url = await start(seen);
    const created = await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, reasoning: 'low', limits: { context_tokens: 32000 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await service!.wait(created.body.run_id as string);
    expect(seen.map((r) => [r.reasoning, r.contextTokens])).toEqual([['low', 32000]]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^runtrail_model_calls_total 1$/m);
    expect(metrics).toMatch(/^runtrail_model_tokens_total\{kind="input"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^runtrail_model_cost_usd_total 0$/m);
    const m = await getJson(`${url}/api/runs/${created.body.run_id as string}/metrics`);
    expect(m.body.metrics).toMatchObject({ cost_usd: 0, tokens: { cached_input: 0, cache_write: 0, reasoning: 0 } });
  });

  it('answers 400 naming reasoning when it is not off, low, medium or high', async () => {
    const url = await start([]);
    const r = await postJson(`${url}/api/runs`, { plugin: 'talk', input: {}, reasoning: 'extreme' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('reasoning');
    expect(JSON.stringify(r.body)).toContain('must be one of off, low, medium, high');
  });
});
