/**
 * Spans as a collector receives them: a real OTLP/HTTP receiver on a loopback port, a real RunService
 * and server, and the span tree checked from what arrived (not from the SDK's memory).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelTurn } from '../../src/providers/model-turn.js';
import { toolResults } from '../../src/plugins/shared/conversation.js';
import type { Agent } from '../../src/runtime/agent.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startTelemetry, type Telemetry } from '../../src/telemetry/otel-telemetry.js';
import { otlpTraceConfig, TelemetryConfigError, telemetryWanted } from '../../src/telemetry/otlp-config.js';
import { goodTurns } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider, type FakeTurn } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../runtime/fixtures/setup.js';
import { postJson, readSse, startTestServer, type TestServer } from '../server/helpers.js';
import { startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from './otlp-receiver.js';

let env: TestEnv;
let receiver: OtlpReceiver;
let telemetry: Telemetry | null = null;
let svc: RunService | null = null;
let server: TestServer | null = null;

beforeEach(async () => {
  env = makeEnv();
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await server?.stop();
  server = null;
  await svc?.close();
  svc = null;
  await telemetry?.shutdown();
  telemetry = null;
  await receiver.close();
  env.cleanup();
});

async function traced(turns: FakeTurn[] = goodTurns(), extraEnv: Record<string, string> = {}): Promise<RunService> {
  telemetry = await startTelemetry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...extraEnv } });
  expect(telemetry).not.toBeNull();
  svc = makeService(env, new FakeProvider(turns), { observers: [telemetry!.observer] });
  return svc;
}

function childrenOf(spans: OtlpSpan[], parent: OtlpSpan): OtlpSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);
}

describe('OpenTelemetry export over OTLP/HTTP', () => {
  it("a run arrives as one trace: runtrail.run over its model calls (GenAI usage) and tool calls, with the run's trace id", async () => {
    // the first model call fails with a retryable error: a retry is a span of its own
    const s = await traced([{ error: { code: 'rate_limited', severity: 'error', summary: 'slow down', retryable: true } }, ...goodTurns()], {
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k%3D1',
    });
    const created = await s.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count', tenant_id: 'acme' }, { claw: 'cli' });
    const done = await s.wait(created.run_id);
    expect(done.status).toBe('completed');
    await telemetry!.flush();

    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const r of receiver.requests) {
      expect(r.path).toBe('/v1/traces');
      expect(r.contentType).toContain('application/json');
      expect(r.headers['x-collector-key']).toBe('k=1');
    }
    const spans = receiver.spans;
    expect(new Set(spans.map((x) => x.traceId))).toEqual(new Set([created.trace_id]));
    expect(created.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const roots = spans.filter((x) => !x.parentSpanId);
    expect(roots.map((r) => r.name)).toEqual(['runtrail.run']);
    const root = roots[0];
    expect(root.attributes).toMatchObject({
      'runtrail.run_id': created.run_id,
      'runtrail.plugin': 'notes',
      'runtrail.claw': 'cli',
      'runtrail.tenant_id': 'acme',
      'runtrail.status': 'completed',
    });
    expect(root.resource['service.name']).toBe('runtrail');
    expect(root.events.map((e) => e.attributes['runtrail.state.to'])).toContain('model_thinking');

    const kids = childrenOf(spans, root);
    expect(kids.length).toBe(spans.length - 1);
    const chats = kids.filter((k) => k.attributes['gen_ai.operation.name'] === 'chat').sort((a, b) => a.startMs - b.startMs);
    // model_turns.jsonl and the spans tell the same calls
    const lines = readFileSync(join(env.dataDir, 'runs', created.run_id, 'runtime', 'model_turns.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; attempt: number; tokens: { input: number; output: number } | null; finish_reason: string });
    expect(chats.map((c) => [c.name, c.attributes['runtrail.turn'], c.attributes['runtrail.attempt']])).toEqual(
      lines.map((l) => ['chat fake-1', l.turn, l.attempt]),
    );
    expect(chats[0].status.code).toBe(2);
    expect(chats[0].attributes['error.type']).toBe('rate_limited');
    for (const [i, c] of chats.entries()) {
      expect(c.kind).toBe(3); // CLIENT
      expect(c.attributes).toMatchObject({
        'gen_ai.system': 'fake',
        'gen_ai.request.model': 'fake-1',
        'gen_ai.response.finish_reasons': [lines[i].finish_reason],
      });
      if (lines[i].tokens) {
        expect(c.attributes['gen_ai.usage.input_tokens']).toBe(lines[i].tokens!.input);
        expect(c.attributes['gen_ai.usage.output_tokens']).toBe(lines[i].tokens!.output);
      }
    }
    const tools = kids.filter((k) => k.attributes['gen_ai.operation.name'] === 'execute_tool').sort((a, b) => a.startMs - b.startMs);
    expect(tools.map((t) => t.name)).toEqual(['execute_tool read_notes', 'execute_tool write_json', 'execute_tool write_md']);
    for (const t of tools) {
      expect(t.attributes['gen_ai.tool.call.id']).toMatch(/^call_/);
      expect(t.attributes['runtrail.run_id']).toBe(created.run_id);
      // a child lies within its run
      expect(t.startMs).toBeGreaterThanOrEqual(root.startMs);
      expect(t.endMs).toBeLessThanOrEqual(root.endMs);
    }
    // a tool call starts after the model call that asked for it ended
    expect(tools[0].startMs).toBeGreaterThanOrEqual(chats[1].endMs);
  });

  it("a traceparent on POST /api/runs makes the run a child of the caller's span; the wire's trace_id is the trace", async () => {
    const s = await traced();
    server = await startTestServer(s, { inputRoots: 'any' });
    const caller = { trace: '4bf92f3577b34da6a3ce929d0e0e4736', span: '00f067aa0ba902b7' };
    const r = await postJson(
      `${server.url}/api/runs`,
      { plugin: 'notes', input: { notes_path: env.notesPath } },
      { traceparent: `00-${caller.trace}-${caller.span}-01` },
    );
    expect(r.status).toBe(201);
    expect(r.body.trace_id).toBe(caller.trace);
    await s.wait(r.body.run_id);
    const sse = await readSse(`${server.url}/api/runs/${r.body.run_id}/events`);
    expect(JSON.parse(sse.events.at(-1)!.data)).toMatchObject({ type: 'done', trace_id: caller.trace });
    await telemetry!.flush();
    const root = receiver.spans.find((x) => x.name === 'runtrail.run')!;
    expect(root).toMatchObject({ traceId: caller.trace, parentSpanId: caller.span });
    expect(root.attributes['runtrail.claw']).toBe('web');
    expect(childrenOf(receiver.spans, root).length).toBe(receiver.spans.length - 1);

    // W3C: a traceparent that does not parse is ignored, and the run starts its own trace
    for (const bad of ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'hello']) {
      const again = await postJson(`${server.url}/api/runs`, { plugin: 'notes', input: { notes_path: env.notesPath } }, { traceparent: bad });
      expect(again.status).toBe(201);
      expect(again.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(again.body.trace_id).not.toBe(caller.trace);
      await s.wait(again.body.run_id);
    }
  });

  it("a subagent's run is in its parent's trace, under the run_agent call (invoke_agent) that started it", async () => {
    const agent = (name: string, turns: (seen: number) => ModelTurn, agents?: string[]): Agent => ({
      name,
      version: '1.0.0',
      description: name,
      inputSchema: z.object({}).passthrough(),
      fileInputs: [],
      defaultSkill: null,
      defaultGoal: `${name}'s goal`,
      promptFragments: [],
      createTools: () => [],
      plan: [],
      artifacts: [],
      validators: [],
      ...(agents ? { agents } : {}),
      offlineProcedure: (state) => turns(toolResults(state.messages).length),
    });
    const helper = agent('helper', () => ({ text: 'helped' }));
    const lead = agent('lead', (seen) => (seen === 0 ? { toolCalls: [{ name: 'run_agent', args: { agent: 'helper', goal: 'help' } }] } : { text: 'done' }), [
      'helper',
    ]);
    telemetry = await startTelemetry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    svc = new RunService({ dataDir: env.dataDir, agents: [lead, helper], env: {}, processRegistry: null, observers: [telemetry!.observer] });
    const created = await svc.create({ plugin: 'lead', input: {} });
    const done = await svc.wait(created.run_id);
    expect(done.status).toBe('completed');
    const child = (await svc.get(done.children![0]))!;
    await telemetry!.flush();
    // one trace: the child's status and spans carry the parent's trace id
    expect(child.trace_id).toBe(created.trace_id);
    const runs = receiver.spans.filter((x) => x.name === 'runtrail.run');
    expect(runs.map((r) => r.attributes['runtrail.run_id']).sort()).toEqual([created.run_id, child.run_id].sort());
    const invoke = receiver.spans.find((x) => x.name === 'invoke_agent helper')!;
    expect(invoke.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'runtrail.node.id': child.run_id });
    const parentRun = runs.find((r) => r.attributes['runtrail.run_id'] === created.run_id)!;
    const childRun = runs.find((r) => r.attributes['runtrail.run_id'] === child.run_id)!;
    expect(invoke.parentSpanId).toBe(parentRun.spanId);
    expect(childRun.parentSpanId).toBe(invoke.spanId);
    expect(new Set(receiver.spans.map((x) => x.traceId))).toEqual(new Set([created.trace_id]));
  });

  it('exports by itself in batches (no flush asked), and shutdown delivers what is left', async () => {
    const s = await traced();
    const a = await s.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await s.wait(a.run_id);
    // the default batch delay is a second: the spans arrive without anyone flushing
    await expect.poll(() => receiver.spans.some((x) => x.traceId === a.trace_id && x.name === 'runtrail.run'), { timeout: 15_000 }).toBe(true);
    await telemetry!.shutdown();

    // a batch delay longer than the test: only shutdown can have delivered these
    telemetry = await startTelemetry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, scheduledDelayMs: 3_600_000 });
    await svc!.close();
    svc = makeService(env, new FakeProvider(goodTurns()), { observers: [telemetry!.observer] });
    const b = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(b.run_id);
    expect(receiver.spans.some((x) => x.traceId === b.trace_id)).toBe(false);
    await telemetry!.shutdown();
    expect(receiver.spans.filter((x) => x.traceId === b.trace_id).map((x) => x.name)).toContain('runtrail.run');
  });

  it('a collector that fails is said (once), and the run is unaffected', async () => {
    const told: string[] = [];
    telemetry = await startTelemetry({ env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces` }, onExportError: (m) => told.push(m) });
    svc = makeService(env, new FakeProvider(goodTurns()), { observers: [telemetry!.observer] });
    receiver.failWith = 500;
    const created = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(created.run_id)).status).toBe('completed');
    await telemetry!.flush();
    expect(told.length).toBe(1);
    expect(told[0]).toContain(`to ${receiver.url}/v1/traces`);
    expect(telemetry!.lastError()).not.toBeNull();
    // the collector is back: the next run's spans arrive and the error clears
    receiver.failWith = null;
    const next = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(next.run_id);
    await telemetry!.flush();
    expect(receiver.spans.some((x) => x.traceId === next.trace_id && x.name === 'runtrail.run')).toBe(true);
    expect(telemetry!.lastError()).toBeNull();
  });
});

describe('OTLP configuration from the standard variables', () => {
  it('is off unless an endpoint is set (nothing started), and OTEL_SDK_DISABLED turns it off', async () => {
    expect(telemetryWanted({})).toBe(false);
    expect(await startTelemetry({ env: { OTEL_SERVICE_NAME: 'x' } })).toBeNull();
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  it('appends /v1/traces to the base endpoint, takes the traces endpoint as given, hides credentials when shown', () => {
    expect(otlpTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })?.url).toBe('http://127.0.0.1:4318/v1/traces');
    expect(otlpTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/otlp' })?.url).toBe('http://c:4318/otlp/v1/traces');
    const both = otlpTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://u:secret@b:2/ingest?k=secret' })!;
    expect(both.url).toBe('https://u:secret@b:2/ingest?k=secret');
    expect(both.shownUrl).toBe('https://b:2/ingest');
    expect(otlpTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })?.notes[0]).toContain('http/json');
  });

  it('names the variable and the value that is wrong', () => {
    const bad = (env: Record<string, string>) => {
      try {
        otlpTraceConfig(env);
      } catch (e) {
        expect(e).toBeInstanceOf(TelemetryConfigError);
        return (e as Error).message;
      }
      return 'no error';
    };
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: .*not http\(s\)|^OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" is not a URL/,
    );
    expect(bad({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toBe(
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" is not a URL (expected http://host:port/v1/traces)',
    );
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://c:4317' })).toContain('OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://c:4317" is not http(s)');
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:1', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toBe(
      'OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value',
    );
    // a bad header never echoes a secret value
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:1', OTEL_EXPORTER_OTLP_HEADERS: '=s3cret' })).not.toContain('s3cret');
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:1', OTEL_EXPORTER_OTLP_TIMEOUT: 'soon' })).toBe(
      'OTEL_EXPORTER_OTLP_TIMEOUT: "soon" must be a positive whole number of milliseconds',
    );
  });
});
