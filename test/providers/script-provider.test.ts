import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseModelTurns } from '../../src/providers/model-turn.js';
import { createScriptProvider, loadScriptTurns } from '../../src/providers/script-provider.js';
import type { ModelRequest, ModelStreamPart } from '../../src/providers/model-provider.js';
import { collect } from './recorded-server.js';

const req: ModelRequest = { system: 'system prompt', messages: [{ role: 'user', content: 'hi' }], tools: [] };
const dir = mkdtempSync(join(tmpdir(), 'runtrail-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const texts = (parts: ModelStreamPart[], type: 'text-delta' | 'reasoning-delta') =>
  parts.filter((p): p is { type: typeof type; text: string } => p.type === type).map((p) => p.text);

describe('script provider', () => {
  it('replays one turn per stream() call: reasoning and text in small chunks, tool calls with ids, finish', async () => {
    const p = createScriptProvider([
      { reasoning: 'Need the rows first.', toolCalls: [{ name: 'read_feedback_csv', args: { path: 'input/f.csv' } }, { name: 'list_artifacts' }] },
      { text: 'All three artifacts are written and validated.' },
    ]);
    expect(p.provider).toBe('script');
    const first = await collect(p.stream(req));
    expect(texts(first, 'reasoning-delta').join('')).toBe('Need the rows first.');
    expect(texts(first, 'reasoning-delta').length).toBeGreaterThan(1);
    const calls = first.filter((x) => x.type === 'tool-call');
    expect(calls).toEqual([
      { type: 'tool-call', id: expect.any(String), name: 'read_feedback_csv', args: { path: 'input/f.csv' } },
      { type: 'tool-call', id: expect.any(String), name: 'list_artifacts', args: {} },
    ]);
    expect(new Set(calls.map((c) => (c as { id: string }).id)).size).toBe(2);
    expect(first[first.length - 1]).toMatchObject({ type: 'finish', reason: 'tool-calls' });

    const second = await collect(p.stream(req));
    const chunks = texts(second, 'text-delta');
    expect(chunks.join('')).toBe('All three artifacts are written and validated.');
    expect(chunks.length).toBe(7);
    expect(second[second.length - 1]).toMatchObject({
      type: 'finish',
      reason: 'stop',
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
    });
    expect(p.turnsLeft).toBe(0);
  });

  it('running out of turns yields a final non-retryable script_exhausted error', async () => {
    const p = createScriptProvider([{ text: 'only' }]);
    await collect(p.stream(req));
    const parts = await collect(p.stream(req));
    expect(parts).toEqual([{ type: 'error', diagnosis: expect.objectContaining({ code: 'script_exhausted', retryable: false }) }]);
    expect((parts[0] as { diagnosis: { summary: string } }).diagnosis.summary).toContain('all 1 turns were used');
  });

  it('a turn with error yields that error (retryable by code unless stated) and the next call moves on', async () => {
    const p = createScriptProvider([
      { error: { code: 'rate_limit', message: 'slow down' } },
      { error: { code: 'auth', message: 'bad key', retryable: false } },
      { error: { code: 'overload', message: 'busy', retryable: false } },
      { text: 'recovered' },
    ]);
    expect(await collect(p.stream(req))).toEqual([
      { type: 'error', diagnosis: expect.objectContaining({ code: 'rate_limit', summary: 'slow down', retryable: true }) },
    ]);
    expect((await collect(p.stream(req)))[0]).toMatchObject({ diagnosis: { code: 'auth', retryable: false } });
    expect((await collect(p.stream(req)))[0]).toMatchObject({ diagnosis: { code: 'overload', retryable: false } });
    expect(texts(await collect(p.stream(req)), 'text-delta').join('')).toBe('recovered');
  });

  it('delayMs waits before the turn and an abort during the wait yields aborted', async () => {
    const p = createScriptProvider([{ text: 'late', delayMs: 60_000 }]);
    const ac = new AbortController();
    const pending = collect(p.stream({ ...req, signal: ac.signal }));
    ac.abort();
    expect(await pending).toEqual([{ type: 'error', diagnosis: expect.objectContaining({ code: 'aborted', retryable: false }) }]);
  });

  it('an abort between chunks stops the stream', async () => {
    const p = createScriptProvider([{ text: 'one two three four five', chunkDelayMs: 1 }]);
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const part of p.stream({ ...req, signal: ac.signal })) {
      seen.push(part.type === 'error' ? part.diagnosis.code : part.type);
      if (seen.length === 2) ac.abort();
    }
    expect(seen).toEqual(['text-delta', 'text-delta', 'aborted']);
  });

  it('loads a script file relative to cwd and names the model after the file', () => {
    writeFileSync(join(dir, 'demo.json'), JSON.stringify([{ text: 'hi' }]));
    const p = createScriptProvider('demo.json', { cwd: dir });
    expect(p.model).toBe('demo.json');
    expect(p.file).toBe(join(dir, 'demo.json'));
  });
});

describe('script validation (bad inputs)', () => {
  const bad = (value: unknown) => {
    const r = parseModelTurns(value);
    expect(r.ok).toBe(false);
    return r.ok ? [] : r.errors;
  };

  it('rejects a non-array and an empty array', () => {
    expect(bad({ text: 'x' })[0]).toBe('script must be a JSON array of turns, got object');
    expect(bad([])[0]).toBe('script must contain at least one turn');
  });

  it('names the turn index and field of a wrong type', () => {
    expect(bad([{ text: 'ok' }, { text: 42 }])[0]).toMatch(/^turn 1: text: /);
    expect(bad([{ toolCalls: [{ name: '' }] }])[0]).toMatch(/^turn 0: toolCalls\.0\.name: must be a non-empty tool name/);
    expect(bad([{ delayMs: -5 }])[0]).toMatch(/^turn 0: delayMs: /);
    expect(bad([{ error: { message: 'x' } }])[0]).toMatch(/^turn 0: error\.code: /);
    expect(bad(['hello'])[0]).toMatch(/^turn 0: \(turn\): /);
  });

  it('rejects unknown fields, naming them (catches typos such as toolcalls)', () => {
    const errs = bad([{ text: 'a' }, { toolcalls: [] }]);
    expect(errs[0]).toMatch(/^turn 1: /);
    expect(errs[0]).toContain('toolcalls');
  });

  it('reports every problem, not just the first', () => {
    expect(bad([{ text: 1 }, { reasoning: 2 }])).toHaveLength(2);
  });

  it('file problems come back as invalid_request diagnoses naming the file', () => {
    const missing = loadScriptTurns('nope.json', { cwd: dir });
    expect(missing).toMatchObject({ ok: false, diagnosis: { code: 'invalid_request' } });
    expect(!missing.ok && missing.diagnosis.summary).toContain('nope.json (ENOENT)');

    writeFileSync(join(dir, 'broken.json'), '[{"text": ');
    const broken = loadScriptTurns('broken.json', { cwd: dir });
    expect(!broken.ok && broken.diagnosis.summary).toBe('Script file broken.json is not valid JSON');

    // a file that is not a script is not echoed back (the server passes caller-chosen paths)
    writeFileSync(join(dir, 'secret.txt'), 'root:x:0:0:root:/root:/bin/bash');
    const secret = loadScriptTurns('secret.txt', { cwd: dir });
    expect(JSON.stringify(secret)).not.toContain('root:x');

    writeFileSync(join(dir, 'wrong.json'), JSON.stringify([{ text: 'a' }, { toolCalls: 'read' }]));
    const wrong = loadScriptTurns('wrong.json', { cwd: dir });
    expect(!wrong.ok && wrong.diagnosis.summary).toMatch(/^Script file wrong\.json is invalid: turn 1: toolCalls: /);
  });

  it('createScriptProvider throws a TypeError with the same message', () => {
    expect(() => createScriptProvider([{ text: 5 }])).toThrow(/turn 0: text:/);
  });
});
