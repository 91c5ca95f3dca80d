/** Durations as people write them in schedules and config: "30s", "15m", "1h", "1h30m", "2d", "500ms". */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration, or null when `text` is not one. */
export function parseDuration(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/.test(t)) return null;
  let ms = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) ms += Number(m[1]) * UNIT_MS[m[2]];
  return Number.isFinite(ms) ? Math.round(ms) : null;
}

/** A duration as a short text ("2s", "1h 30m"), for messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, s] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= s) {
      parts.push(`${Math.floor(rest / s)}${unit}`);
      rest %= s;
    }
  }
  return parts.join(' ');
}
