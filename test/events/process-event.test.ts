import { describe, expect, it } from 'vitest';
import { makeProcessEvent, ProcessEventError } from '../../src/events/process-event-factory.js';
import { sanitizeProcessPayload, isSecretKey } from '../../src/events/process-payload-sanitizer.js';

const base = { operationId: 'op1', targetType: 'tool', source: 'tool', status: 'running' } as const;

describe('makeProcessEvent', () => {
  it('derives percent from current/total and stamps ts', () => {
    const ev = makeProcessEvent({ ...base, current: 1, total: 3 }, () => 77);
    expect(ev.percent).toBe(33.3);
    expect(ev.ts).toBe(77);
    expect(ev.level).toBe('info');
  });

  it('keeps an explicit percent and clamps it to 0..100', () => {
    expect(makeProcessEvent({ ...base, current: 1, total: 3, percent: 50 }).percent).toBe(50);
    expect(makeProcessEvent({ ...base, current: 5, total: 3 }).percent).toBe(100);
  });

  it('defaults level from status', () => {
    expect(makeProcessEvent({ ...base, status: 'failed' }).level).toBe('error');
    expect(makeProcessEvent({ ...base, status: 'cancelled' }).level).toBe('warning');
  });

  it.each([
    ['status', { ...base, status: 'done' }, /status must be one of queued\|started\|running\|completed\|failed\|cancelled\|skipped, got "done"/],
    ['level', { ...base, level: 'fatal' }, /level must be one of debug\|info\|warning\|error/],
    ['targetType', { ...base, targetType: 'job' }, /targetType must be one of tool\|skill\|subagent\|task\|runtime/],
    ['source', { ...base, source: 'user' }, /source must be one of skill\|tool\|subagent\|runtime/],
    ['operationId', { ...base, operationId: '' }, /operationId/],
    ['current', { ...base, current: Number.NaN }, /current must be a finite number/],
    ['total', { ...base, total: '3' }, /total must be a finite number/],
    ['message', { ...base, message: 42 }, /message must be a string/],
  ])('rejects a bad %s with a message naming it', (field, fields, re) => {
    let err: unknown;
    try {
      makeProcessEvent(fields as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProcessEventError);
    expect((err as ProcessEventError).field).toBe(field);
    expect((err as Error).message).toMatch(re);
  });

  it('scrubs secrets from the payload', () => {
    const ev = makeProcessEvent({ ...base, payload: { apiKey: 'k', rows: 3 } });
    expect(ev.payload).toEqual({ rows: 3 });
  });
});

describe('sanitizeProcessPayload', () => {
  it.each(['apiKey', 'API-KEY', 'x_api_key', 'accessToken', 'client_secret', 'Authorization', 'aws_credentials', 'Password', 'api key'])('removes %s', (k) => {
    expect(isSecretKey(k)).toBe(true);
    expect(sanitizeProcessPayload({ [k]: 'x', keep: 1 })).toEqual({ keep: 1 });
  });

  it.each(['passwd', 'DB_PASSPHRASE', 'private_key', 'privateKey', 'Cookie', 'set-cookie'])('removes %s (other names of the same secrets)', (k) => {
    expect(isSecretKey(k)).toBe(true);
    expect(sanitizeProcessPayload({ [k]: 'x', keep: 1 })).toEqual({ keep: 1 });
  });

  it.each(['sessionId', 'cwd', 'PWD', 'public_key', 'author', 'keyCount'])('keeps %s', (k) => {
    expect(isSecretKey(k)).toBe(false);
  });

  it('scrubs at any depth, inside arrays too, and keeps harmless keys', () => {
    const input = { a: { b: [{ token: 't', ok: true }, { nested: { client_secret: 's', n: 1 } }] }, stage: 'detect' };
    expect(sanitizeProcessPayload(input)).toEqual({ a: { b: [{ ok: true }, { nested: { n: 1 } }] }, stage: 'detect' });
  });

  it('never mutates its input', () => {
    const input = { apiKey: 'k', list: [1, 2, 3], s: 'x'.repeat(5000) };
    const copy = structuredClone(input);
    sanitizeProcessPayload(input, { maxItems: 2, maxStringLength: 10 });
    expect(input).toEqual(copy);
  });

  it('truncates long strings, long arrays and deep nesting with a visible marker', () => {
    const out = sanitizeProcessPayload({
      s: 'y'.repeat(3000),
      arr: Array.from({ length: 60 }, (_, i) => i),
      deep: { a: { b: { c: { d: { e: { f: 1 } } } } } },
    }) as Record<string, unknown>;
    expect((out.s as string).length).toBeLessThan(2100);
    expect(out.s).toMatch(/…\[truncated 1000 chars\]$/);
    expect(out.arr as unknown[]).toHaveLength(51);
    expect((out.arr as unknown[])[50]).toBe('…[truncated 10 items]');
    expect(JSON.stringify(out.deep)).toContain('[max depth]');
  });

  it('survives cycles and odd types', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    a.list = [a];
    const out = sanitizeProcessPayload({
      a,
      big: 10n,
      fn: function named() {},
      sym: Symbol('s'),
      date: new Date(0),
      err: new Error('bad'),
      buf: Buffer.from('abc'),
      nan: Number.NaN,
      map: new Map([
        ['password', 1],
        ['k', 2],
      ]),
      set: new Set([1]),
      undef: undefined,
      get throws(): never {
        throw new Error('getter');
      },
    }) as Record<string, unknown>;
    expect(out.a).toEqual({ name: 'a', self: '[circular]', list: ['[circular]'] });
    expect(out.big).toBe('10');
    expect(out.fn).toBe('[function named]');
    expect(out.sym).toBe('Symbol(s)');
    expect(out.date).toBe('1970-01-01T00:00:00.000Z');
    expect(out.err).toEqual({ name: 'Error', message: 'bad' });
    expect(out.buf).toBe('[Buffer 3 bytes]');
    expect(out.nan).toBe('NaN');
    expect(out.map).toEqual({ k: 2 });
    expect(out.set).toEqual([1]);
    expect('undef' in out).toBe(false);
    expect(out.throws).toMatch(/unreadable: getter/);
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it('shares of a value seen twice (not a cycle) are kept', () => {
    const shared = { v: 1 };
    expect(sanitizeProcessPayload({ x: shared, y: shared })).toEqual({ x: { v: 1 }, y: { v: 1 } });
  });
});
