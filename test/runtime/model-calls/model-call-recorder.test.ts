/**
 * runtime/model_calls.jsonl: each model call of a run — attempts, a compaction's summary — with the
 * request the provider received and what it answered, tied to its span, turn and tool calls; secrets
 * masked, images as files of the run, each line capped, and nothing at all when capture is off.
 */
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import type { ChatMessage } from '../../../src/providers/model-provider.js';
import { sentMessageOf } from '../../../src/providers/sent-request.js';
import { ModelCallRecorder } from '../../../src/runtime/model-calls/model-call-recorder.js';
import { requestDiff, type Message } from '../../../web/src/model-call.js';
import { MODEL_CALLS_FILE, parseModelCallLines, readModelCalls, type ModelCallLine } from '../../../src/runtime/model-calls/model-call-record.js';
import type { RunService } from '../../../src/runtime/service/run-service.js';
import { RunService as Service } from '../../../src/runtime/service/run-service.js';
import { createTextOnlyPlugin } from '../../../src/plugins/text-only-plugin.js';
import { createReadFileTool } from '../../../src/tools/read-file-tool.js';
import type { AnyToolDefinition } from '../../../src/tools/tool.js';
import { goodTurns, notesPlugin } from '../fixtures/fake-plugin.js';
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

const root = (runId: string) => join(env.dataDir, 'runs', runId);
const lines = (runId: string): ModelCallLine[] => parseModelCallLines(readFileSync(join(root(runId), MODEL_CALLS_FILE), 'utf8'));
const turnsFile = (runId: string) =>
  readFileSync(join(root(runId), 'runtime', 'model_turns.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { turn: number; attempt: number; tokens: unknown; cost_usd: number | null; finish_reason: string });

async function runNotes(provider: FakeProvider, extra: Parameters<typeof makeService>[2] = {}, req: Record<string, unknown> = {}) {
  svc = makeService(env, provider, extra);
  const created = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count', ...req });
  const status = await svc.wait(created.run_id);
  return { runId: created.run_id, status };
}

describe('model calls recorded', () => {
  it('keeps what each call sent and received, tied to its span, turn and the tool calls it asked for', async () => {
    const provider = new FakeProvider(goodTurns());
    const { runId, status } = await runNotes(provider);
    expect(status.status).toBe('completed');
    const page = await readModelCalls(runId, root(runId), { limit: 100 });
    expect(page.capture).toBe('on');
    expect(page.total).toBe(provider.requests.length);
    page.calls.forEach((call, i) => {
      const sent = provider.requests[i];
      // the whole request as the provider got it: system prompt, every message with its parts, the tools, the settings
      expect(call.request.system).toBe(sent.system);
      expect(call.request.messages).toEqual(sent.messages.map(sentMessageOf));
      expect(call.request.message_count).toBe(sent.messages.length);
      expect(page.tool_sets[call.request.tools!.set]).toEqual(sent.tools);
      expect(call.request.settings).toMatchObject({ model: 'fake:fake-1', reasoning: 'off', cache_key: `runtrail-${runId}` });
      expect(call).toMatchObject({
        call: i + 1,
        kind: 'turn',
        turn: i + 1,
        attempt: 0,
        span_id: `model:${i + 1}.0`,
        previous_call: i === 0 ? null : i,
        trace_id: status.trace_id,
      });
    });
    // the response: text and tool calls with their ids, which the next request's results answer
    const [first, second, third] = page.calls;
    expect(first.response).toMatchObject({
      text: 'Reading.',
      finish_reason: 'tool-calls',
      tool_calls: [{ id: 'call_0_0', name: 'read_notes', arguments: {} }],
    });
    expect(second.request.messages.at(-1)!.parts[0]).toMatchObject({
      type: 'tool_call_response',
      id: 'call_0_0',
      name: 'read_notes',
      response: 'one\ntwo\nthree\n',
    });
    expect(third.response).toMatchObject({ text: 'Done: 3 notes.', finish_reason: 'stop', tool_calls: [] });
    // usage, cost and finish as model_turns.jsonl counts them
    const turns = turnsFile(runId);
    page.calls.forEach((c, i) =>
      expect({ usage: c.usage, cost: c.cost_usd, finish: c.response.finish_reason }).toEqual({
        usage: turns[i].tokens,
        cost: turns[i].cost_usd,
        finish: turns[i].finish_reason,
      }),
    );
    expect(first.latency_ms).toBeGreaterThanOrEqual(first.first_token_ms!);
    // on disk a turn keeps only what it added: the system prompt and the earlier messages are the previous call's
    const raw = lines(runId);
    expect(raw[0].request.system).toBe(provider.requests[0].system);
    expect(raw[1].request).toMatchObject({ history: { from_call: 1, kept: 1 }, message_count: 3 });
    expect(raw[1].request.system).toBeUndefined();
    expect(raw[1].request.messages).toHaveLength(2);
    // ?turn= and ?call= narrow the page
    expect((await readModelCalls(runId, root(runId), { turn: 2 })).calls.map((c) => c.call)).toEqual([2]);
    expect((await readModelCalls(runId, root(runId), { call: 3 })).calls[0].request.messages).toHaveLength(6);
  });

  it('records each attempt of a retried turn, the failed one with its error', async () => {
    const turns = goodTurns();
    const provider = new FakeProvider([{ error: { code: 'rate_limited', severity: 'error', summary: 'slow down', retryable: true } }, ...turns]);
    const { runId, status } = await runNotes(provider);
    expect(status.status).toBe('completed');
    const calls = (await readModelCalls(runId, root(runId), { turn: 1 })).calls;
    expect(calls.map((c) => [c.span_id, c.response.finish_reason])).toEqual([
      ['model:1.0', 'error'],
      ['model:1.1', 'tool-calls'],
    ]);
    expect(calls[0].response.error).toEqual({ code: 'rate_limited', summary: 'slow down' });
    expect(calls[0].usage).toBeNull();
    // the retry sent the same conversation: it shares all of it with the failed attempt
    expect(lines(runId)[1].request).toMatchObject({ history: { from_call: 1, kept: 1 }, messages: [] });
  });

  it('masks a secret a tool returned, in the request that carried it back', async () => {
    writeFileSync(env.notesPath, 'one\napi_key=abcd1234efgh5678\nOPENAI_API_KEY sk-proj-AbCdEfGhIjKlMnOpQrStUv012345\n');
    const provider = new FakeProvider([goodTurns()[0], { text: 'Saw sk-proj-AbCdEfGhIjKlMnOpQrStUv012345 in the notes.' }]);
    const { runId } = await runNotes(provider, {}, { limits: { stop_repair_turns: 0 } });
    // the model did get the secret (a tool read it): the record does not keep it
    expect(JSON.stringify(provider.requests[1].messages)).toContain('sk-proj-AbCdEfGhIjKlMnOpQrStUv012345');
    const file = readFileSync(join(root(runId), MODEL_CALLS_FILE), 'utf8');
    expect(file).not.toContain('sk-proj-AbCdEfGhIjKlMnOpQrStUv012345');
    expect(file).not.toContain('abcd1234efgh5678');
    const second = (await readModelCalls(runId, root(runId), { call: 2 })).calls[0];
    expect(second.request.messages.at(-1)!.parts[0]).toMatchObject({ type: 'tool_call_response', response: expect.stringContaining('api_key=[redacted]') });
    expect(second.response.text).toBe('Saw [redacted] in the notes.');
  });

  it('cuts a call over capture.max_call_bytes and says what it cut', async () => {
    const big = `${'lorem ipsum '.repeat(4_000)}THE END`;
    writeFileSync(env.notesPath, big);
    const provider = new FakeProvider(goodTurns());
    const limit = 16 * 1024;
    const { runId } = await runNotes(provider, { defaults: () => ({ capture: { max_call_bytes: limit } }) });
    const file = readFileSync(join(root(runId), MODEL_CALLS_FILE), 'utf8')
      .split('\n')
      .filter(Boolean);
    for (const l of file) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(limit);
    const second = lines(runId)[1];
    expect(second.cut).toMatchObject({
      limit_bytes: limit,
      fields: [{ path: 'request.messages[2].parts[0].response', message: 2, original_chars: big.length }],
    });
    expect(second.cut!.bytes_before).toBeGreaterThan(limit);
    const response = second.request.messages.at(-1)!.parts[0] as { response: string };
    expect(response.response).toMatch(/^lorem ipsum .*…\[cut: kept \d+ of 48007 characters\]$/);
    // the next call shares that message: its reader is told the cut is in it too
    const third = (await readModelCalls(runId, root(runId), { call: 3 })).calls[0];
    expect(third.cut?.fields.map((f) => f.message)).toEqual([2]);
  });

  it('records nothing when capture.model_io is off in config.json or on the agent, and says it was off', async () => {
    const off = await runNotes(new FakeProvider(goodTurns()), { defaults: () => ({ capture: { model_io: false } }) });
    expect(off.status.status).toBe('completed');
    expect(existsSync(join(root(off.runId), MODEL_CALLS_FILE))).toBe(false);
    expect(JSON.parse(readFileSync(join(root(off.runId), 'runtime', 'resolved_config.json'), 'utf8')).capture).toEqual({
      model_io: false,
      max_call_bytes: 1048576,
    });
    expect(await readModelCalls(off.runId, root(off.runId))).toMatchObject({ capture: 'off', total: 0, calls: [] });
    await svc?.close();
    svc = makeService(env, new FakeProvider(goodTurns()), { agents: [{ ...notesPlugin(), capture: { model_io: false } }] });
    const created = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count' });
    await svc.wait(created.run_id);
    expect(existsSync(join(root(created.run_id), MODEL_CALLS_FILE))).toBe(false);
    expect((await readModelCalls(created.run_id, root(created.run_id))).capture).toBe('off');
  });

  it('keeps an image the model was shown as a file of the run, not inline', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const look: AnyToolDefinition = {
      name: 'look',
      description: 'returns an image',
      parameters: z.object({}),
      async execute() {
        return { ok: true, content: 'a picture', images: [{ mediaType: 'image/png', data: png.toString('base64'), label: 'pic.png' }] };
      },
    };
    const provider = new FakeProvider([{ toolCalls: [{ name: 'look', args: {} }] }, { text: 'seen' }]);
    const { runId } = await runNotes(provider, { agents: [{ ...notesPlugin([look]), artifacts: [], plan: [], validators: [] }] });
    const text = readFileSync(join(root(runId), MODEL_CALLS_FILE), 'utf8');
    expect(text).not.toContain(png.toString('base64'));
    const second = (await readModelCalls(runId, root(runId), { call: 2 })).calls[0];
    const file = second.request.messages.at(-1)!.parts[1] as { type: string; file_id: string; bytes: number; mime_type: string; label: string };
    expect(file).toMatchObject({
      type: 'file',
      mime_type: 'image/png',
      bytes: png.length,
      label: 'pic.png',
      file_id: expect.stringMatching(/^runtime\/model_call_files\/[0-9a-f]{32}\.png$/),
    });
    expect(readFileSync(join(root(runId), file.file_id))).toEqual(png);
    expect(readdirSync(join(root(runId), 'runtime', 'model_call_files'))).toHaveLength(1);
  });
});

describe("a compaction's summary call", () => {
  let dir = '';
  let service: Service | null = null;
  afterEach(async () => {
    await service?.close();
    service = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is recorded with the compaction span it belongs to, between the turns', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-calls-'));
    const big = join(dir, 'big.txt');
    writeFileSync(big, `${Array.from({ length: 400 }, (_, i) => `line ${i} of the big input file with some words`).join('\n')}\n`);
    const reader = createTextOnlyPlugin({ name: 'reader', description: 'reads', offlineAnswer: 'x' });
    const plugin = {
      ...reader,
      fileInputs: ['file'],
      inputSchema: { type: 'object', properties: { file: { type: 'string' } } },
      createTools: (ctx: Parameters<typeof reader.createTools>[0]) => [createReadFileTool({ files: ctx.workspace })],
    };
    const turns = [
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', limit: 150 } }] },
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', offset: 151, limit: 150 } }] },
      { toolCalls: [{ name: 'read_file', args: { path: 'input/big.txt', offset: 301, limit: 100 } }] },
      { text: 'read it all' },
    ];
    writeFileSync(join(dir, 'turns.json'), JSON.stringify(turns));
    service = new Service({ dataDir: dir, agents: [plugin], inputRoots: 'any', env: {}, cwd: dir, processRegistry: null });
    const created = await service.create({ plugin: 'reader', input: { file: big }, model: 'script:turns.json', limits: { context_tokens: 4_000 } });
    expect((await service.wait(created.run_id)).status).toBe('completed');
    const page = await readModelCalls(created.run_id, join(dir, 'runs', created.run_id), { limit: 100 });
    const summary = page.calls.find((c) => c.kind === 'compaction')!;
    expect(summary).toMatchObject({ span_id: 'compaction:1', turn: null, attempt: null, request: { tools: null } });
    expect(summary.request.system).toMatch(/^You compact the context of an agent run/);
    const after = page.calls.find((c) => c.kind === 'turn' && c.call > summary.call)!;
    // the turn after it was sent the summary in place of the older turns
    expect(after.request.messages.some((m) => m.parts.some((p) => p.type === 'text' && p.content.startsWith('[summary of earlier turns')))).toBe(true);
    expect(page.calls.filter((c) => c.kind === 'turn').map((c) => c.span_id)).toEqual(['model:1.0', 'model:2.0', 'model:3.0', 'model:4.0']);
  });
});

describe("a resumed run's model calls", () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One attempt's recorder on the run folder, as run-scope opens it, and a way to play its turns. */
  function attempt(runRoot: string, provider: FakeProvider) {
    const listeners = new Set<(ev: AgentEvent) => void>();
    const recorder = new ModelCallRecorder({
      root: runRoot,
      traceId: 't',
      subscribe: (fn) => {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
    });
    const model = recorder.wrap(provider);
    const tools = [{ name: 'read_notes', description: 'reads', inputSchema: { type: 'object' } }];
    return {
      recorder,
      async turn(turn: number, messages: ChatMessage[]): Promise<void> {
        const start = { stream: 'model', data: { phase: 'start', turn, attempt: 0, provider: 'fake', model: 'fake-1' } } as unknown as AgentEvent;
        for (const fn of listeners) fn(start);
        for await (const _ of model.stream({ system: 'sys', messages, tools })) {
          // played to its end
        }
      },
    };
  }

  it('go on numbering after the dead attempt, one call per number, each diffed against the turn before it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-calls-'));
    mkdirSync(join(dir, 'runtime'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'count the notes' }];
    const first = attempt(dir, new FakeProvider(() => ({ text: 'reading', toolCalls: [{ name: 'read_notes', args: {} }] })));
    for (let turn = 1; turn <= 3; turn++) {
      await first.turn(turn, [...messages]);
      messages.push({ role: 'assistant', content: `turn ${turn}` }, { role: 'user', content: `result ${turn}` });
    }
    await first.recorder.close();
    // the process died while writing its fourth call's line
    appendFileSync(join(dir, MODEL_CALLS_FILE), '{"call":4,"kind":"turn","span_id":"model:4.0","tur');

    const second = attempt(dir, new FakeProvider(() => ({ text: 'done' })));
    await second.turn(4, [...messages]);
    messages.push({ role: 'assistant', content: 'turn 4' }, { role: 'user', content: 'result 4' });
    await second.turn(5, [...messages]);
    await second.recorder.close();

    const page = await readModelCalls('run', dir, { limit: 100 });
    expect(page.calls.map((c) => [c.call, c.turn, c.previous_call])).toEqual([
      [1, 1, null],
      [2, 2, 1],
      [3, 3, 2],
      [5, 4, 3],
      [6, 5, 5],
    ]);
    for (const n of [1, 3, 5, 6]) expect((await readModelCalls('run', dir, { call: n })).calls.map((c) => c.call)).toEqual([n]);
    // the first call after the resume added two messages to the third call's request, and says so
    const [resumed] = (await readModelCalls('run', dir, { call: 5 })).calls;
    const [before] = (await readModelCalls('run', dir, { call: 3 })).calls;
    const diff = requestDiff(before.request.messages as Message[], resumed.request.messages as Message[]);
    expect(diff.added.to - diff.added.from).toBe(2);
    // the tool list the first attempt's calls name is still on record
    expect(page.tool_sets[page.calls[0].request.tools!.set]).toHaveLength(1);
    expect((await readModelCalls('run', dir, { call: 1 })).tool_sets).not.toEqual({});
  });
});
