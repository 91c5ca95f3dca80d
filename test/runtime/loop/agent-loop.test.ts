import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelProvider, ModelRequest, ModelStreamPart } from '../../../src/providers/model-provider.js';
import { AgentLoop, DEFAULT_LIMITS } from '../../../src/runtime/loop/agent-loop.js';
import { type PublishedEvent, publishing, noopPublish } from '../../../src/runtime/run-publisher.js';
import { ToolExecutor } from '../../../src/runtime/loop/tool-executor.js';
import type { AnyToolDefinition } from '../../../src/tools/tool.js';

const note: AnyToolDefinition = {
  name: 'note',
  description: 'notes a word',
  parameters: z.object({ word: z.string() }),
  execute: async (args) => ({ ok: true, content: `noted ${(args as { word: string }).word}` }),
};

/** Each call plays the next script entry: tool calls without ids, a retryable error, or an answer. */
function provider(script: Array<{ calls?: string[]; error?: true; text?: string }>): ModelProvider {
  let n = 0;
  return {
    provider: 'test',
    model: 'm',
    async *stream(_req: ModelRequest): AsyncIterable<ModelStreamPart> {
      const step = script[n++] ?? { text: 'out of script' };
      for (const word of step.calls ?? []) yield { type: 'tool-call', id: '', name: 'note', args: { word } };
      if (step.error) {
        yield { type: 'error', diagnosis: { code: 'rate_limited', severity: 'error', summary: 'busy', retryable: true } };
        return;
      }
      if (step.text) yield { type: 'text-delta', text: step.text };
      yield { type: 'finish', reason: step.calls?.length ? 'tool-calls' : 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}

function loopOver(script: Parameters<typeof provider>[0], o: { maxIterations?: number; counters?: { callCounter: number; iterations: number } } = {}) {
  const events: PublishedEvent[] = [];
  const publish = publishing((e) => events.push(e), noopPublish);
  const loop = new AgentLoop({
    provider: provider(script),
    system: 's',
    messages: [{ role: 'user', content: 'go' }],
    executor: new ToolExecutor({ tools: [note], allowedTools: ['note'], publish }),
    publish,
    limits: { ...DEFAULT_LIMITS, max_iterations: o.maxIterations ?? DEFAULT_LIMITS.max_iterations },
    signal: new AbortController().signal,
    sleep: async () => {},
    ...(o.counters
      ? { resume: { counters: { toolCalls: 0, lastText: '', answerPrefix: '', continuations: 0, ...o.counters }, usedMs: 0, pendingCalls: [] } }
      : {}),
  });
  return { loop, events };
}

const callIds = (loop: AgentLoop) => loop.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));

describe('AgentLoop', () => {
  it('names the calls a provider gave no id, in order over the turns; a failed attempt that is retried names none', async () => {
    const { loop } = loopOver([{ calls: ['a', 'b'] }, { calls: ['x'], error: true }, { calls: ['c'] }, { text: 'done' }]);
    expect(await loop.run()).toEqual({ kind: 'final', text: 'done' });
    loop.dispose();
    expect(callIds(loop)).toEqual(['call_1', 'call_2', 'call_3']);
    expect(loop.counters()).toMatchObject({ iterations: 3, toolCalls: 3, callCounter: 3 });
  });

  it('a resumed loop goes on from its counters: the next turn and call numbers, max_iterations counting the turns before', async () => {
    const { loop, events } = loopOver([{ calls: ['d'] }, { calls: ['e'] }], { maxIterations: 5, counters: { callCounter: 7, iterations: 3 } });
    const out = await loop.run();
    loop.dispose();
    expect(out.kind === 'failed' && out.diagnosis.code).toBe('max_iterations');
    expect(callIds(loop)).toEqual(['call_8', 'call_9']);
    // what it published says which turns these were: what a run's metrics and state are folded from
    const starts = events.flatMap((e) => (e.stream === 'model' && e.data.phase === 'start' ? [e.data.turn] : []));
    expect(starts).toEqual([4, 5]);
  });
});
