import { describe, expect, it } from 'vitest';
import { createRunId, formatRunId, isRunId } from '../../../src/runtime/storage/run-id.js';

describe('run ids', () => {
  it('have the documented format and encode UTC time with microseconds', () => {
    const micros = BigInt(Date.UTC(2026, 6, 14, 15, 30, 12)) * 1000n + 123456n;
    expect(formatRunId(micros)).toBe('run_20260714_153012_123456');
    expect(isRunId(createRunId())).toBe(true);
    expect(isRunId('run_2026_x')).toBe(false);
    expect(isRunId('../run_20260714_153012_123456')).toBe(false);
  });

  it('never repeat, even for many ids in the same microsecond, and sort in creation order', () => {
    const ids = Array.from({ length: 20_000 }, () => createRunId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
