import { describe, expect, it } from 'vitest';
import { parseDuration, formatDuration } from '../../src/triggers/duration.js';
import { firesBetween, nextFireAfter, timingOf } from '../../src/triggers/schedule-timing.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('durations', () => {
  it('reads what people write, and nothing else', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2d')).toBe(172_800_000);
    for (const bad of ['', '30', 's', '1 h', '-1s', '1w', '1h 30m', 'soon']) expect(parseDuration(bad), bad).toBeNull();
    expect(formatDuration(5_400_000)).toBe('1h 30m');
  });
});

describe('fire times', () => {
  it('every counts whole intervals from its anchor', () => {
    const t = timingOf({ every: '2s', tz: 'UTC' }, at('2030-01-01T00:00:00Z'));
    expect(iso(nextFireAfter(t, at('2030-01-01T00:00:00Z')))).toBe('2030-01-01T00:00:02.000Z');
    expect(iso(nextFireAfter(t, at('2030-01-01T00:00:03.100Z')))).toBe('2030-01-01T00:00:04.000Z');
    const span = firesBetween(t, at('2030-01-01T00:00:00Z'), at('2030-01-01T01:00:00Z'));
    expect(span.count).toBe(1800);
    expect(iso(span.last)).toBe('2030-01-01T01:00:00.000Z');
  });

  it('a daily cron in Europe/Berlin keeps its local time across both daylight-saving changes', () => {
    const t = timingOf({ cron: '0 9 * * *', tz: 'Europe/Berlin' }, 0);
    // winter: UTC+1, summer: UTC+2
    expect(iso(nextFireAfter(t, at('2030-03-30T12:00:00Z')))).toBe('2030-03-31T07:00:00.000Z');
    expect(iso(nextFireAfter(t, at('2030-03-29T12:00:00Z')))).toBe('2030-03-30T08:00:00.000Z');
    expect(iso(nextFireAfter(t, at('2030-10-26T12:00:00Z')))).toBe('2030-10-27T08:00:00.000Z');
  });

  it('a time the spring change skips fires once, just after the gap; a time the autumn change repeats fires once', () => {
    // 2030-03-31 02:30 does not exist in Berlin (02:00 → 03:00)
    const spring = timingOf({ cron: '30 2 * * *', tz: 'Europe/Berlin' }, 0);
    const s = firesBetween(spring, at('2030-03-30T12:00:00Z'), at('2030-03-31T12:00:00Z'));
    expect(s.count).toBe(1);
    expect(iso(s.last)).toBe('2030-03-31T01:00:00.000Z'); // 03:00 CEST
    // 2030-10-27 02:30 happens twice (CEST, then CET)
    const autumn = firesBetween(spring, at('2030-10-26T12:00:00Z'), at('2030-10-27T12:00:00Z'));
    expect(autumn.count).toBe(1);
  });

  it('six fields fire on seconds; at fires once', () => {
    const t = timingOf({ cron: '*/10 * * * * *', tz: 'UTC' }, 0);
    expect(iso(nextFireAfter(t, at('2030-01-01T00:00:01Z')))).toBe('2030-01-01T00:00:10.000Z');
    const once = timingOf({ at: '2030-06-01T09:00:00', tz: 'America/New_York' }, 0);
    expect(iso(nextFireAfter(once, at('2030-01-01T00:00:00Z')))).toBe('2030-06-01T13:00:00.000Z');
    expect(nextFireAfter(once, at('2030-06-01T13:00:00Z'))).toBeNull();
  });

  it('a long span of a cron is counted up to a cap, and still names the last fire time', () => {
    const t = timingOf({ cron: '* * * * * *', tz: 'UTC' }, 0);
    const span = firesBetween(t, at('2030-01-01T00:00:00Z'), at('2030-01-02T00:00:00Z'), 500);
    expect(span.capped).toBe(true);
    expect(span.count).toBe(500);
    expect(iso(span.last)).toBe('2030-01-02T00:00:00.000Z');
  });
});
