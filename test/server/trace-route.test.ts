/** GET /api/runs/:id/trace over a real RunService: the waterfall's bars, live and finished. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptProvider } from '../../src/providers/script-provider.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import type { RunTraceView } from '../../src/telemetry/run-trace-view.js';
import { tracePlugin, traceTurns } from '../fixtures/trace-plugin.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { getJson, readSse } from './helpers.js';

let server: RunningServer | null = null;
let service: RunService | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  await service?.close();
  service = null;
  rmSync(dir, { recursive: true, force: true });
});

let dir = '';
async function start(toolMs: number): Promise<RunningServer> {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-trace-'));
  service = new RunService({
    dataDir: dir,
    agents: [tracePlugin({ toolMs })],
    env: {},
    providerResolver: () => createScriptProvider(traceTurns(5)),
    backoffMs: () => 5,
  });
  // no dataDir: the server reads runs from the service's own folder
  server = await startServer({ service, port: 0, env: {} });
  return server;
}

describe('GET /api/runs/:id/trace', () => {
  it('a finished run: the run, each model call with its tokens, each tool call with the index of its wire step', async () => {
    const s = await start(20);
    const created = await service!.create({ plugin: 'tracer', input: {} });
    await service!.wait(created.run_id);
    const r = await getJson(`${s.url}/api/runs/${created.run_id}/trace`);
    expect(r.status).toBe(200);
    const view = r.body as RunTraceView;
    expect(view).toMatchObject({ run_id: created.run_id, trace_id: created.trace_id, ended: true });
    expect(view.bars[0]).toMatchObject({ id: 'run', kind: 'run', start_ms: 0, status: 'ok', end_ms: view.last_ms });
    expect(view.bars.map((b) => [b.kind, b.label, b.status])).toEqual([
      ['run', created.run_id, 'ok'],
      ['model', 'inline', 'error'],
      ['model', 'inline', 'ok'],
      ['tool', 'lookup', 'ok'],
      ['mcp', 'files · read_file', 'ok'],
      ['model', 'inline', 'ok'],
      ['tool', 'flaky', 'error'],
      ['model', 'inline', 'ok'],
    ]);
    // model bars carry what model_turns.jsonl says of the same calls
    const lines = readFileSync(join(dir, 'runs', created.run_id, 'runtime', 'model_turns.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; attempt: number; tokens: unknown; finish_reason: string });
    const models = view.bars.filter((b) => b.kind === 'model');
    expect(models.map((m) => [m.turn, m.attempt, m.tokens, m.finish_reason])).toEqual(lines.map((l) => [l.turn, l.attempt, l.tokens, l.finish_reason]));
    // a tool bar's step_index is the wire step's index: a click on it opens that step
    const sse = await readSse(`${s.url}/api/runs/${created.run_id}/events`);
    const steps = sse.events
      .map((e) => JSON.parse(e.data) as { type: string; index?: number; step?: { name: string; phase: string } })
      .filter((f) => f.type === 'step' && f.step?.phase !== 'start');
    for (const b of view.bars.filter((x) => x.step_index !== null)) {
      const step = steps.find((f) => f.index === b.step_index)!;
      expect(step.step!.name).toBe(b.kind === 'mcp' ? 'read_file' : b.label);
    }
    expect(view.bars.filter((b) => b.kind !== 'run' && b.kind !== 'model').every((b) => b.step_index !== null)).toBe(true);
    for (const b of view.bars) expect(b.duration_ms).toBe((b.end_ms as number) - b.start_ms);
  });

  it('a live run: what has ended has its bar, what still runs has none for its end; an unknown run is 404', async () => {
    const s = await start(60_000);
    const created = await service!.create({ plugin: 'tracer', input: {} });
    let view: RunTraceView | null = null;
    for (let i = 0; i < 200; i++) {
      view = (await getJson(`${s.url}/api/runs/${created.run_id}/trace`)).body as RunTraceView;
      if (view.bars.some((b) => b.kind === 'tool')) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(view!.ended).toBe(false);
    const open = view!.bars.filter((b) => b.end_ms === null).map((b) => [b.kind, b.label, b.status]);
    expect(open).toEqual([
      ['run', created.run_id, 'running'],
      ['tool', 'lookup', 'running'],
    ]);
    await service!.cancel(created.run_id);
    const after = (await getJson(`${s.url}/api/runs/${created.run_id}/trace`)).body as RunTraceView;
    expect(after.ended).toBe(true);
    // the cancelled tool call ended with the run (the executor reports it as failed)
    const lookup = after.bars.find((b) => b.label === 'lookup')!;
    expect(lookup.end_ms).not.toBeNull();
    expect(lookup.status).toBe('error');
    expect(after.bars[0].status).toBe('cancelled');

    expect((await getJson(`${s.url}/api/runs/run_20990101_000000_000000/trace`)).status).toBe(404);
    expect((await getJson(`${s.url}/api/runs/..%2F..%2Fetc/trace`)).status).toBe(404);
  });
});
