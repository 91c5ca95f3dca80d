/** The request's `reasoning` and `limits.context_tokens`: validated, recorded, and handed to the model each turn. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunService } from '../../../src/runtime/service/run-service.js';
import { RunRequestError } from '../../../src/runtime/run-request-error.js';
import { goodTurns } from '../fixtures/fake-plugin.js';
import { FakeProvider } from '../fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../fixtures/setup.js';

let env: TestEnv;
let svc: RunService | null = null;
beforeEach(() => {
  env = makeEnv();
});
afterEach(async () => {
  await svc?.close();
  svc = null;
  env.cleanup();
});

const runFile = (id: string, rel: string) => join(env.dataDir, 'runs', id, rel);

describe('reasoning and context_tokens on a run request', () => {
  it('hands reasoning and context_tokens to every model turn and records them', async () => {
    const provider = new FakeProvider(goodTurns());
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, reasoning: 'high', limits: { context_tokens: 50_000 } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    expect(provider.requests.map((r) => [r.reasoning, r.contextTokens, r.cacheKey])).toEqual([
      ['high', 50_000, `runtrail-${run_id}`],
      ['high', 50_000, `runtrail-${run_id}`],
      ['high', 50_000, `runtrail-${run_id}`],
    ]);
    expect(JSON.parse(readFileSync(runFile(run_id, 'input/request.json'), 'utf8'))).toMatchObject({ reasoning: 'high', limits: { context_tokens: 50_000 } });
    const cfg = JSON.parse(readFileSync(runFile(run_id, 'runtime/resolved_config.json'), 'utf8'));
    expect(cfg).toMatchObject({ reasoning: 'high', limits: { context_tokens: 50_000 }, model_info: null });
  });

  it("counts every model call's tokens in stats() for /metrics; a model without a price is counted apart", async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(run_id);
    expect(svc.stats().models).toEqual({
      turns: 3,
      tokens: { input: 30, output: 15, cached_input: 0, cache_write: 0, reasoning: 0 },
      cost_usd: 0,
      unpriced_turns: 3,
    });
  });

  it('defaults to reasoning off and the catalog window', async () => {
    const provider = new FakeProvider(goodTurns());
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(run_id);
    expect(provider.requests[0]!.reasoning).toBe('off');
    expect(provider.requests[0]).not.toHaveProperty('contextTokens');
  });

  it.each([
    [{ reasoning: 'max' }, 'reasoning', 'must be one of off, low, medium, high'],
    [{ reasoning: true }, 'reasoning', 'must be one of off, low, medium, high'],
    [{ limits: { context_tokens: 100 } }, 'limits.context_tokens', '>=2048'],
    [{ limits: { context_tokens: 1.5 } }, 'limits.context_tokens', 'expected int'],
  ])('refuses %j naming the field', async (extra, path, message) => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const err = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, ...extra }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunRequestError);
    const issue = (err as RunRequestError).details.issues?.find((i) => i.path === path);
    expect(issue?.message).toContain(message);
  });

  it('a run whose prompt cannot fit limits.context_tokens fails with context_length and sends nothing', async () => {
    const { createScriptProvider } = await import('../../../src/providers/script-provider.js');
    const provider = createScriptProvider([{ text: 'never sent' }]);
    svc = makeService(env, provider);
    // the goal is in the system prompt and the first message: ~3,000 tokens
    const { run_id } = await svc.create({
      plugin: 'notes',
      input: { notes_path: env.notesPath },
      goal: 'count '.repeat(1000),
      limits: { context_tokens: 2048 },
    });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('failed');
    expect(st.diagnosis).toMatchObject({ code: 'context_length' });
    expect(st.diagnosis!.summary).toContain('limits.context_tokens is 2048');
    expect(provider.turnsLeft).toBe(1);
  });
});
