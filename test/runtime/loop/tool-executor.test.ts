import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentEventMap, AgentStream } from '../../../src/events/agent-event.js';
import { emptyHooks } from '../../../src/runtime/run-hooks.js';
import { ToolExecutor } from '../../../src/runtime/loop/tool-executor.js';
import type { AnyToolDefinition } from '../../../src/tools/tool.js';

const echo: AnyToolDefinition = {
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string().max(10) }),
  output: z.object({ echoed: z.string() }),
  async execute(args: { text: string }) {
    return { ok: true, content: args.text, details: { echoed: args.text } };
  },
};

function setup(
  tools: AnyToolDefinition[],
  allowed = tools.map((t) => t.name),
  hooks = emptyHooks(),
  extra: Partial<ConstructorParameters<typeof ToolExecutor>[0]> = {},
) {
  const published: Array<{ stream: AgentStream; data: unknown }> = [];
  const ex = new ToolExecutor({
    tools,
    allowedTools: allowed,
    hooks,
    publish: <S extends AgentStream>(stream: S, data: AgentEventMap[S]) => void published.push({ stream, data }),
    ...extra,
  });
  return { ex, published };
}

describe('ToolExecutor', () => {
  it('runs a tool and publishes start then result with the kind', async () => {
    const skillTool = { ...echo, name: 'score', kind: 'skill' as const };
    const { ex, published } = setup([echo, skillTool]);
    const r = await ex.execute({ id: 'c1', name: 'score', args: { text: 'hi' } });
    expect(r.result).toEqual({ ok: true, content: 'hi', details: { echoed: 'hi' } });
    expect(published.map((p) => p.data)).toEqual([
      { phase: 'start', name: 'score', toolCallId: 'c1', args: { text: 'hi' }, kind: 'skill' },
      expect.objectContaining({ phase: 'result', name: 'score', toolCallId: 'c1', isError: false, result: 'hi' }),
    ]);
    expect(ex.specs().map((s) => s.name)).toEqual(['echo', 'score']);
    expect(ex.specs()[0].inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
  });

  it('a tool keeps its spec from turn to turn, and a changed description or schema gives a new one', () => {
    const tool: AnyToolDefinition = { ...echo, name: 'note' };
    const { ex } = setup([tool]);
    const [first] = ex.specs();
    expect(ex.specs()[0]).toBe(first);
    tool.description = 'writes a note';
    const [renamed] = ex.specs();
    expect(renamed).not.toBe(first);
    expect(renamed.description).toBe('writes a note');
    tool.parameters = z.object({ body: z.string() });
    expect(ex.specs()[0].inputSchema).toMatchObject({ properties: { body: { type: 'string' } } });
  });

  it('unknown tool, invalid args and denied permission are error results with diagnoses', async () => {
    const { ex, published } = setup([echo, { ...echo, name: 'hidden' }], ['echo']);
    const unknown = await ex.execute({ id: '1', name: 'nope', args: {} });
    expect(unknown.result).toMatchObject({ ok: false, diagnosis: { code: 'tool_not_found' } });
    expect(unknown.result.content).toContain('available tools: echo');
    const bad = await ex.execute({ id: '2', name: 'echo', args: { text: 5 } });
    expect(bad.result).toMatchObject({ ok: false, diagnosis: { code: 'invalid_args' } });
    expect(bad.result.content).toContain('text:');
    const denied = await ex.execute({ id: '3', name: 'hidden', args: { text: 'x' } });
    expect(denied.result).toMatchObject({ ok: false, diagnosis: { code: 'permission_denied' } });
    expect(ex.specs().map((s) => s.name)).toEqual(['echo']);
    const results = published.filter((p) => (p.data as { phase: string }).phase === 'result');
    expect(results.map((p) => (p.data as { diagnosis: { code: string } }).diagnosis.code)).toEqual(['tool_not_found', 'invalid_args', 'permission_denied']);
  });

  it('PreToolUse may deny or rewrite; PostToolUse may replace the output', async () => {
    const hooks = emptyHooks();
    hooks.preToolUse.push({
      name: 'NoSecrets',
      beforeTool: (c) => ((c.args as { text: string }).text === 'secret' ? { action: 'deny', reason: 'no secrets' } : undefined),
    });
    hooks.preToolUse.push({ name: 'Upper', beforeTool: (c) => ({ action: 'rewrite', args: { text: (c.args as { text: string }).text.toUpperCase() } }) });
    hooks.postToolUse.push({ name: 'Tag', afterTool: (_c, r) => ({ ...r, content: `[${r.content}]` }) });
    const { ex } = setup([echo], ['echo'], hooks);
    expect((await ex.execute({ id: '1', name: 'echo', args: { text: 'hi' } })).result.content).toBe('[HI]');
    const denied = await ex.execute({ id: '2', name: 'echo', args: { text: 'secret' } });
    expect(denied.result).toMatchObject({ ok: false, diagnosis: { code: 'hook_denied', detail: 'no secrets' } });
    hooks.preToolUse[1] = { name: 'Broken', beforeTool: () => ({ action: 'rewrite', args: { text: 42 } }) };
    expect((await ex.execute({ id: '3', name: 'echo', args: { text: 'x' } })).result).toMatchObject({ ok: false, diagnosis: { code: 'hook_error' } });
  });

  it('a throwing handler, a malformed result and invalid output are errors, not crashes', async () => {
    const thrower: AnyToolDefinition = {
      ...echo,
      name: 'boom',
      execute: async () => {
        throw new Error('disk full');
      },
    };
    const malformed: AnyToolDefinition = { ...echo, name: 'weird', execute: async () => 42 as never };
    const badOut: AnyToolDefinition = { ...echo, name: 'badout', execute: async () => ({ ok: true, content: 'x', details: { echoed: 1 } }) };
    const { ex } = setup([thrower, malformed, badOut]);
    expect((await ex.execute({ id: '1', name: 'boom', args: { text: 'a' } })).result).toMatchObject({
      ok: false,
      content: expect.stringContaining('disk full'),
      diagnosis: { code: 'tool_error' },
    });
    expect((await ex.execute({ id: '2', name: 'weird', args: { text: 'a' } })).result).toMatchObject({ ok: false, diagnosis: { code: 'invalid_output' } });
    expect((await ex.execute({ id: '3', name: 'badout', args: { text: 'a' } })).result).toMatchObject({ ok: false, diagnosis: { code: 'invalid_output' } });
  });

  it('times a tool out and aborts its signal; the run signal cancels it', async () => {
    let aborted = false;
    const slow: AnyToolDefinition = {
      ...echo,
      name: 'slow',
      timeoutMs: 20,
      execute: (_a, ctx) => new Promise(() => ctx?.signal?.addEventListener('abort', () => (aborted = true))),
    };
    const { ex } = setup([slow]);
    const r = await ex.execute({ id: '1', name: 'slow', args: { text: 'a' } });
    expect(r.result).toMatchObject({ ok: false, diagnosis: { code: 'tool_timeout', retryable: true } });
    expect(aborted).toBe(true);

    const run = new AbortController();
    const { ex: ex2 } = setup([{ ...slow, timeoutMs: 60_000 }], ['slow'], emptyHooks(), { signal: run.signal });
    const p = ex2.execute({ id: '2', name: 'slow', args: { text: 'a' } });
    run.abort();
    expect((await p).result).toMatchObject({ ok: false, diagnosis: { code: 'cancelled' } });
  });

  it('calls of one executor with different timeouts each time out at their own deadline, also after a quick call', async () => {
    const hang = (name: string, timeoutMs: number): AnyToolDefinition => ({ ...echo, name, timeoutMs, execute: () => new Promise(() => undefined) });
    const { ex } = setup([{ ...echo, name: 'quick', timeoutMs: 60_000 }, hang('long', 400), hang('short', 30)]);
    await ex.execute({ id: 'q', name: 'quick', args: { text: 'a' } }); // leaves the shared timer armed a minute out
    const ended: string[] = [];
    const long = ex.execute({ id: 'l', name: 'long', args: { text: 'a' } }).then((r) => (ended.push('long'), r));
    const short = ex.execute({ id: 's', name: 'short', args: { text: 'a' } }).then((r) => (ended.push('short'), r));
    expect((await short).result.diagnosis?.code).toBe('tool_timeout');
    expect(ended).toEqual(['short']);
    expect((await long).result.diagnosis?.code).toBe('tool_timeout');
    expect(ended).toEqual(['short', 'long']);
  });

  it('a signal first read after the timeout is already aborted', async () => {
    let late: AbortSignal | undefined;
    const lazy: AnyToolDefinition = {
      ...echo,
      name: 'lazy',
      timeoutMs: 10,
      execute: (_a, ctx) =>
        new Promise((resolve) =>
          setTimeout(() => {
            late = ctx?.signal;
            resolve({ ok: true, content: 'late' });
          }, 40),
        ),
    };
    const { ex } = setup([lazy]);
    expect((await ex.execute({ id: '1', name: 'lazy', args: { text: 'a' } })).result.diagnosis?.code).toBe('tool_timeout');
    await new Promise((r) => setTimeout(r, 60));
    expect(late?.aborted).toBe(true);
  });

  it("the call's signal tells a tool why its call stopped: the timeout, the run's cancel, and to a reader that looks after the stop", async () => {
    const reasons: string[] = [];
    const told = (signal: AbortSignal | undefined, prefix: string) =>
      signal?.addEventListener('abort', () => reasons.push(`${prefix}: ${signal.reason instanceof Error ? signal.reason.message : String(signal.reason)}`), {
        once: true,
      });
    const waiting: AnyToolDefinition = {
      ...echo,
      name: 'waiting',
      timeoutMs: 20,
      execute: (_a, ctx) => new Promise(() => told(ctx?.signal, 'timeout')),
    };
    const { ex } = setup([waiting]);
    expect((await ex.execute({ id: '1', name: 'waiting', args: { text: 'a' } })).result.diagnosis?.code).toBe('tool_timeout');
    expect(reasons).toEqual(['timeout: timeout']);

    const run = new AbortController();
    let late: AbortSignal | undefined;
    const cancelled: AnyToolDefinition = {
      ...echo,
      name: 'cancelled',
      timeoutMs: 60_000,
      execute: (_a, ctx) =>
        new Promise(() => {
          late = ctx?.signal;
          told(ctx?.signal, 'run');
        }),
    };
    const { ex: ex2 } = setup([cancelled], ['cancelled'], emptyHooks(), { signal: run.signal });
    const p = ex2.execute({ id: '2', name: 'cancelled', args: { text: 'a' } });
    run.abort('stopped by the user');
    expect((await p).result.diagnosis?.code).toBe('cancelled');
    if (late?.aborted) reasons.push(`late: ${String(late.reason)}`);
    expect(reasons).toEqual(['timeout: timeout', 'run: stopped by the user', 'late: stopped by the user']);
  });

  it("a JSON Schema tool gets its own copy of the arguments: editing them leaves the model's call as it was", async () => {
    const args = { path: 'a.txt', opts: { depth: 1 } };
    const editing: AnyToolDefinition = {
      name: 'editing',
      description: 'edits its arguments',
      parameters: { type: 'object', properties: { path: { type: 'string' }, opts: { type: 'object' } } },
      execute: async (a) => {
        const x = a as typeof args;
        x.path = 'changed';
        x.opts.depth = 9;
        return { ok: true, content: 'ok' };
      },
    };
    const flat = { path: 'b.txt' };
    const { ex } = setup([editing]);
    await ex.execute({ id: '1', name: 'editing', args });
    await ex.execute({ id: '2', name: 'editing', args: flat });
    expect(args).toEqual({ path: 'a.txt', opts: { depth: 1 } });
    expect(flat).toEqual({ path: 'b.txt' });
  });

  it('hands the tool an OperationReporter', async () => {
    const seen: string[] = [];
    const reporting: AnyToolDefinition = {
      ...echo,
      name: 'rep',
      async execute(_a, ctx) {
        ctx?.reporter?.start('go');
        return { ok: true, content: 'ok', details: { echoed: 'ok' } };
      },
    };
    const { ex } = setup([reporting], ['rep'], emptyHooks(), {
      reporterFor: (call) => ({
        operationId: call.toolCallId,
        start: (m?: string) => void seen.push(`${call.toolCallId}:${m}`),
        progress() {},
        stage() {},
        complete: () => void seen.push('auto-complete'),
        fail() {},
        cancel() {},
        skip() {},
        child() {
          throw new Error('unused');
        },
      }),
    });
    await ex.execute({ id: 'c9', name: 'rep', args: { text: 'a' } });
    expect(seen).toEqual(['c9:go', 'auto-complete']);
  });

  it('holds many calls at once on one run signal without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on('warning', onWarning);
    const slow: AnyToolDefinition = {
      ...echo,
      name: 'slow',
      execute: async (args: { text: string }) => {
        await new Promise((r) => setTimeout(r, 20));
        return { ok: true, content: args.text, details: { echoed: args.text } };
      },
    };
    const { ex } = setup([slow], ['slow'], emptyHooks(), { signal: new AbortController().signal });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ex.execute({ id: `p${i}`, name: 'slow', args: { text: String(i) } })));
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    process.off('warning', onWarning);
    expect(results.every((r) => r.result.ok)).toBe(true);
    expect(warnings).toEqual([]);
  });
});
