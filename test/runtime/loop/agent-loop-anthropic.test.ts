/**
 * The agent loop on the Anthropic provider against the loopback Messages server (it keeps every
 * request and accounts the prompt cache as Anthropic does): thinking kept and sent back turn after
 * turn, a prefix that stays byte-identical so each turn reads the last one from the cache, usage,
 * cost and model_turns lines, a tool's image reaching the model, an oversize request refused.
 */
import { describe, expect, it } from 'vitest';
import { runScriptedAnthropicLoop } from '../../../bench/scripted-anthropic-loop.js';
import { modelCost } from '../../../src/providers/model-catalog.js';

type Msg = { role: string; content: Array<Record<string, unknown>> };
const strip = (m: Msg): Msg => ({ role: m.role, content: m.content.map(({ cache_control: _cc, ...rest }) => rest) });
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('AgentLoop × Anthropic Messages (loopback)', () => {
  it('keeps the prefix byte-identical turn to turn, so every turn reads the previous prompt from the cache', async () => {
    const r = await runScriptedAnthropicLoop({ turns: 4 });
    expect(r.outcome).toEqual({ kind: 'final', text: 'Sync failures after updates are the top issue.' });
    expect(r.requests).toHaveLength(4);
    const bodies = r.requests.map((q) => q.body);
    for (const b of bodies.slice(1)) {
      expect(JSON.stringify(b.tools)).toBe(JSON.stringify(bodies[0]!.tools));
      expect(JSON.stringify(b.system)).toBe(JSON.stringify(bodies[0]!.system));
    }
    for (let k = 0; k + 1 < bodies.length; k++) {
      const before = (bodies[k]!.messages as Msg[]).map(strip);
      const after = (bodies[k + 1]!.messages as Msg[]).map(strip);
      expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    }
    // the cache model read, at each turn, everything the turn before it sent
    for (let k = 1; k < r.requests.length; k++) {
      const prev = r.requests[k - 1]!.usage;
      expect(r.requests[k]!.usage.cache_read_input_tokens).toBe(prev.input_tokens + prev.cache_read_input_tokens + prev.cache_creation_input_tokens);
    }
  });

  it('sends each tool-calling turn back with its signed thinking block first', async () => {
    const r = await runScriptedAnthropicLoop({ turns: 3, reasoning: 'medium' });
    const last = r.requests[2]!.body;
    expect(last.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    const assistants = (last.messages as Msg[]).filter((m) => m.role === 'assistant');
    expect(assistants).toHaveLength(2);
    for (const a of assistants) {
      expect(a.content[0]).toMatchObject({
        type: 'thinking',
        thinking: expect.stringMatching(/^Page \d next/),
        signature: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      });
      expect(a.content[a.content.length - 1]).toMatchObject({ type: 'tool_use', name: 'read_feedback_csv' });
    }
    expect(r.loop.messages.filter((m) => m.role === 'assistant' && m.reasoning?.[0]?.providerMetadata?.anthropic?.signature)).toHaveLength(3);
  });

  it('adds up cached, cache-write and total tokens, prices every turn and writes one model_turns line per call', async () => {
    const r = await runScriptedAnthropicLoop({ turns: 4 });
    const u = r.requests.map((q) => q.usage);
    const sum = (f: (x: (typeof u)[number]) => number) => u.reduce((a, x) => a + f(x), 0);
    expect(r.metrics.tokens).toEqual({
      input: sum((x) => x.input_tokens + x.cache_read_input_tokens + x.cache_creation_input_tokens),
      output: sum((x) => x.output_tokens),
      cached_input: sum((x) => x.cache_read_input_tokens),
      cache_write: sum((x) => x.cache_creation_input_tokens),
      reasoning: 0,
    });
    const lines = r.turnLines
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; model: string; cost_usd: number; finish_reason: string; tokens: { cached_input: number } });
    expect(lines.map((l) => [l.turn, l.model, l.finish_reason])).toEqual([
      [1, 'anthropic:claude-sonnet-4-5', 'tool-calls'],
      [2, 'anthropic:claude-sonnet-4-5', 'tool-calls'],
      [3, 'anthropic:claude-sonnet-4-5', 'tool-calls'],
      [4, 'anthropic:claude-sonnet-4-5', 'stop'],
    ]);
    const expected = u.map(
      (x) =>
        modelCost('anthropic', 'claude-sonnet-4-5', {
          inputTokens: x.input_tokens + x.cache_read_input_tokens + x.cache_creation_input_tokens,
          outputTokens: x.output_tokens,
          cachedInputTokens: x.cache_read_input_tokens,
          cacheWriteTokens: x.cache_creation_input_tokens,
        })!,
    );
    expect(lines.map((l) => l.cost_usd)).toEqual(expected);
    expect(r.metrics.cost_usd).toBeCloseTo(
      expected.reduce((a, b) => a + b, 0),
      9,
    );
    expect(r.metrics.cost_usd).toBeGreaterThan(0);
  });

  it('gives cost_usd null, not 0, for a model without a known price', async () => {
    const r = await runScriptedAnthropicLoop({ turns: 2, model: 'claude-unknown-test-model' });
    expect(r.outcome.kind).toBe('final');
    expect(r.metrics.cost_usd).toBeNull();
    expect(r.metrics.tokens.input).toBeGreaterThan(0);
    expect(
      r.turnLines
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { cost_usd: unknown }).cost_usd),
    ).toEqual([null, null]);
  });

  it("puts a tool's image into the next request as an image block of its tool_result", async () => {
    const r = await runScriptedAnthropicLoop({ turns: 2, image: { mediaType: 'image/png', data: PNG, label: 'dashboard.png' } });
    const messages = r.requests[1]!.body.messages as Msg[];
    const toolResult = messages[2]!.content[0]!;
    expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_loopback_0_0' });
    expect(toolResult.content).toEqual([
      { type: 'text', text: 'dashboard.png' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
  });

  it('fails the run with context_length before sending when limits.context_tokens cannot hold the prompt', async () => {
    const r = await runScriptedAnthropicLoop({ turns: 2, contextTokens: 2500 });
    expect(r.outcome.kind).toBe('failed');
    expect(r.outcome.kind === 'failed' && r.outcome.diagnosis).toMatchObject({ code: 'context_length', retryable: false });
    expect(r.requests).toHaveLength(0);
  });
});
