import { describe, expect, it } from 'vitest';
import { createOfflineProvider, OFFLINE_MODEL } from '../../src/providers/offline-provider.js';
import type { ChatMessage, ModelRequest, ModelStreamPart } from '../../src/providers/model-provider.js';
import type { OfflineProcedure } from '../../src/providers/model-turn.js';
import type { OfflineProcedure as RuntimeOfflineProcedure } from '../../src/runtime/agent.js';
import { collect } from './recorded-server.js';

const req = (messages: ChatMessage[]): ModelRequest => ({
  system: 'You are FeedbackLens.',
  messages,
  tools: [{ name: 'read_feedback_csv', description: 'read', inputSchema: { type: 'object' } }],
});

/** A tiny reference procedure: read the file, then answer. */
const procedure: OfflineProcedure = ({ messages }) => {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return { reasoning: 'The rows are in.', text: `Read ${last.content} rows.` };
  return { text: 'Reading the CSV.', toolCalls: [{ name: 'read_feedback_csv', args: { path: 'input/f.csv' } }] };
};

describe('offline provider', () => {
  it('is provider offline, model reference-v1', () => {
    const p = createOfflineProvider(procedure);
    expect([p.provider, p.model]).toEqual(['offline', OFFLINE_MODEL]);
    expect(OFFLINE_MODEL).toBe('reference-v1');
  });

  it('runs the procedure on the request and streams its turn: word chunks, tool call with a fresh id, estimated usage', async () => {
    const p = createOfflineProvider(procedure);
    const parts = await collect(p.stream(req([{ role: 'user', content: 'analyse' }])));
    expect(parts.filter((x) => x.type === 'text-delta').map((x) => (x as { text: string }).text)).toEqual(['Reading ', 'the ', 'CSV.']);
    const call = parts.find((x) => x.type === 'tool-call') as Extract<ModelStreamPart, { type: 'tool-call' }>;
    expect(call).toMatchObject({ name: 'read_feedback_csv', args: { path: 'input/f.csv' } });
    const fin = parts[parts.length - 1] as Extract<ModelStreamPart, { type: 'finish' }>;
    expect(fin.reason).toBe('tool-calls');
    expect(fin.usage!.inputTokens).toBeGreaterThan(0);
    expect(fin.usage!.outputTokens).toBeGreaterThan(0);

    const again = await collect(p.stream(req([{ role: 'user', content: 'analyse' }])));
    const call2 = again.find((x) => x.type === 'tool-call') as { id: string };
    expect(call2.id).not.toBe(call.id);

    const next = await collect(
      p.stream(
        req([
          { role: 'user', content: 'analyse' },
          { role: 'assistant', content: 'Reading the CSV.', toolCalls: [{ id: call.id, name: call.name, args: call.args }] },
          { role: 'tool', toolCallId: call.id, toolName: call.name, content: '240', isError: false },
        ]),
      ),
    );
    expect(
      next
        .filter((x) => x.type === 'reasoning-delta')
        .map((x) => (x as { text: string }).text)
        .join(''),
    ).toBe('The rows are in.');
    expect(
      next
        .filter((x) => x.type === 'text-delta')
        .map((x) => (x as { text: string }).text)
        .join(''),
    ).toBe('Read 240 rows.');
    expect(next[next.length - 1]).toMatchObject({ type: 'finish', reason: 'stop' });
  });

  it('is deterministic: the same conversation gives the same parts', async () => {
    const a = await collect(createOfflineProvider(procedure).stream(req([{ role: 'user', content: 'x' }])));
    const b = await collect(createOfflineProvider(procedure).stream(req([{ role: 'user', content: 'x' }])));
    expect(a).toEqual(b);
  });

  it('a procedure that throws or returns garbage becomes a provider_error, never an exception', async () => {
    const throwing = createOfflineProvider(() => {
      throw new Error('no rows');
    });
    expect(await collect(throwing.stream(req([])))).toEqual([
      { type: 'error', diagnosis: expect.objectContaining({ code: 'provider_error', retryable: false, summary: 'The offline model failed: no rows' }) },
    ]);
    const garbage = createOfflineProvider((() => ({ toolCalls: 'nope' })) as unknown as OfflineProcedure);
    const [part] = await collect(garbage.stream(req([])));
    expect(part).toMatchObject({ type: 'error', diagnosis: { code: 'provider_error' } });
    expect((part as { diagnosis: { summary: string } }).diagnosis.summary).toContain('toolCalls');
  });

  it("accepts async procedures and the runtime's OfflineProcedure type as is", async () => {
    const runtimeProc: RuntimeOfflineProcedure = async () => ({ text: 'done' });
    const parts = await collect(createOfflineProvider(runtimeProc).stream(req([])));
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'done' });
  });

  it('an aborted signal yields aborted without running the procedure', async () => {
    let ran = false;
    const p = createOfflineProvider(() => {
      ran = true;
      return { text: 'x' };
    });
    const ac = new AbortController();
    ac.abort();
    expect(await collect(p.stream({ ...req([]), signal: ac.signal }))).toEqual([{ type: 'error', diagnosis: expect.objectContaining({ code: 'aborted' }) }]);
    expect(ran).toBe(false);
  });

  it('rejects a non-function procedure clearly', () => {
    expect(() => createOfflineProvider(undefined as unknown as OfflineProcedure)).toThrow(/procedure must be a function/);
  });
});
