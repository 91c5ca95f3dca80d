import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import type { RunMetricsFile } from '../../../src/runtime/metrics/run-metrics.js';
import type { RunService } from '../../../src/runtime/service/run-service.js';
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

function read(runId: string, rel: string): string {
  return readFileSync(join(env.dataDir, 'runs', runId, rel), 'utf8');
}
function events(runId: string): AgentEvent[] {
  return read(runId, 'runtime/events.jsonl')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AgentEvent);
}

describe('executeRun: what the loop publishes is what the run reports', () => {
  it("metrics.json and model_turns.jsonl are the loop's model and tool events folded: turns, retries, tokens, cost, tool calls", async () => {
    const [first, ...rest] = goodTurns();
    // one retryable provider error before the first turn's answer: a call of its own, attempt 0, then attempt 1
    const provider = new FakeProvider([{ error: { code: 'rate_limited', severity: 'error', summary: 'slow down', retryable: true } }, first, ...rest]);
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    const evs = events(run_id);
    const ends = evs.flatMap((e) => (e.stream === 'model' && e.data.phase === 'end' ? [e.data] : []));
    const results = evs.flatMap((e) => (e.stream === 'tool' && e.data.phase === 'result' ? [e.data] : []));
    expect(ends.map((d) => [d.turn, d.attempt, d.finishReason])).toEqual([
      [1, 0, 'error'],
      [1, 1, 'tool-calls'],
      [2, 0, 'tool-calls'],
      [3, 0, 'stop'],
    ]);

    const m = JSON.parse(read(run_id, 'runtime/metrics.json')) as RunMetricsFile;
    expect(m.iterations).toBe(3);
    expect(m.provider_retries).toBe(1);
    expect(m.model_latency_ms.turns).toBe(4);
    expect(m.tokens.input).toBe(ends.reduce((n, d) => n + (d.tokens?.input ?? 0), 0));
    expect(m.tokens.output).toBe(ends.reduce((n, d) => n + (d.tokens?.output ?? 0), 0));
    expect(m.tokens.input).toBe(30); // the failed call reported no usage
    expect(m.tool_calls).toEqual({ total: 3, failed: 0, by_name: { read_notes: 1, write_json: 1, write_md: 1 } });
    expect(m.tool_calls.total).toBe(results.length);

    const lines = read(run_id, 'runtime/model_turns.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; attempt: number; started_at: string; error?: string; latency_ms: number });
    expect(lines.map((l) => [l.turn, l.attempt, l.error ?? null])).toEqual([
      [1, 0, 'rate_limited'],
      [1, 1, null],
      [2, 0, null],
      [3, 0, null],
    ]);
    // each line is its call's end event: when it was sent, how long it took
    expect(lines.map((l) => l.started_at)).toEqual(ends.map((d) => new Date(d.startedAt).toISOString()));
    expect(lines.map((l) => l.latency_ms)).toEqual(ends.map((d) => d.latencyMs));
  });

  it('the run.state that a model call or a tool call implies is published just before that call starts', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    const evs = events(run_id);
    const stateAt = (i: number) => {
      const e = evs[i];
      return e.stream === 'run' && e.data.type === 'run.state' ? e.data.to : null;
    };
    const moves = evs.flatMap((_, i) => (stateAt(i) === 'model_thinking' || stateAt(i) === 'tool_executing' ? [i] : []));
    expect(moves.length).toBe(5);
    for (const i of moves) {
      const next = evs[i + 1];
      if (stateAt(i) === 'model_thinking') expect(next.stream === 'model' && next.data.phase).toBe('start');
      else expect(next.stream === 'tool' && next.data.phase).toBe('start');
    }
    // every model call and every tool call ran in the state it implies
    let state: string | null = null;
    for (let i = 0; i < evs.length; i++) {
      state = stateAt(i) ?? state;
      const e = evs[i];
      if (e.stream === 'model' && e.data.phase === 'start') expect(state).toBe('model_thinking');
      if (e.stream === 'tool' && e.data.phase === 'start') expect(state).toBe('tool_executing');
    }
  });
});
