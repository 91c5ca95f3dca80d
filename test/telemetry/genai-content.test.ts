/**
 * gen_ai.system_instructions / gen_ai.input.messages / gen_ai.output.messages on `chat` spans, as a
 * collector receives them: only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the same
 * messages the run's model-call record keeps (masked), and never when the run's capture is off.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readModelCalls } from '../../src/runtime/model-calls/model-call-record.js';
import type { RunService } from '../../src/runtime/service/run-service.js';
import { startTelemetry, type Telemetry } from '../../src/telemetry/otel-telemetry.js';
import { goodTurns } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../runtime/fixtures/setup.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let env: TestEnv;
let receiver: OtlpReceiver;
let telemetry: Telemetry | null = null;
let svc: RunService | null = null;

beforeEach(async () => {
  env = makeEnv();
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await svc?.close();
  svc = null;
  await telemetry?.shutdown();
  telemetry = null;
  await receiver.close();
  env.cleanup();
});

async function tracedRun(extraEnv: Record<string, string>, capture?: { model_io: boolean }) {
  telemetry = await startTelemetry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...extraEnv } });
  svc = makeService(env, new FakeProvider(goodTurns()), { observers: [telemetry!.observer], ...(capture ? { defaults: () => ({ capture }) } : {}) });
  const created = await svc.create({
    plugin: 'notes',
    input: { notes_path: env.notesPath },
    goal: 'count the notes; my key is sk-proj-AbCdEfGhIjKlMnOpQrStUv012345',
  });
  expect((await svc.wait(created.run_id)).status).toBe('completed');
  await telemetry!.flush();
  const chats = receiver.spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').sort((a, b) => a.startMs - b.startMs);
  expect(chats).toHaveLength(3);
  return { runId: created.run_id, chats };
}

describe('GenAI message content on chat spans', () => {
  it("with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: the recorded request and response, in the conventions' shape", async () => {
    const { runId, chats } = await tracedRun({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    const page = await readModelCalls(runId, join(env.dataDir, 'runs', runId), { limit: 10 });
    chats.forEach((span, i) => {
      const call = page.calls[i];
      expect(span.attributes['runtrail.turn']).toBe(call.turn);
      expect(JSON.parse(String(span.attributes['gen_ai.input.messages']))).toEqual(call.request.messages);
      expect(JSON.parse(String(span.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: call.request.system }]);
    });
    expect(JSON.parse(String(chats[0].attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'count the notes; my key is [redacted]' }] },
    ]);
    expect(JSON.parse(String(chats[0].attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Reading.' },
          { type: 'tool_call', id: 'call_0_0', name: 'read_notes', arguments: {} },
        ],
        finish_reason: 'tool_call',
      },
    ]);
    expect(JSON.parse(String(chats[2].attributes['gen_ai.output.messages']))[0]).toMatchObject({
      finish_reason: 'stop',
      parts: [{ type: 'text', content: 'Done: 3 notes.' }],
    });
    expect(JSON.stringify(receiver.spans)).not.toContain('sk-proj-AbCdEfGhIjKlMnOpQrStUv012345');
  });

  it('without the variable (the default), and with capture.model_io off even with it: no message content', async () => {
    const plain = await tracedRun({});
    for (const s of plain.chats) expect(Object.keys(s.attributes).filter((k) => k.startsWith('gen_ai.') && /messages|instructions/.test(k))).toEqual([]);
    await svc?.close();
    await telemetry?.shutdown();
    receiver.spans.length = 0;
    const off = await tracedRun({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }, { model_io: false });
    for (const s of off.chats) expect(s.attributes['gen_ai.input.messages']).toBeUndefined();
  });
});
