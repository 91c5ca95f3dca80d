/** Run ids `run_YYYYMMDD_HHMMSS_ffffff` (UTC), unique within this process even inside one microsecond. */
let lastMicros = 0n;

function nowMicros(): bigint {
  // Date.now() gives the wall clock; hrtime supplies the sub-millisecond digits.
  const ms = BigInt(Date.now());
  const sub = (process.hrtime.bigint() / 1000n) % 1000n;
  return ms * 1000n + sub;
}

/** Next run id; ids never repeat and sort in creation order within one process. */
export function createRunId(): string {
  let micros = nowMicros();
  if (micros <= lastMicros) micros = lastMicros + 1n;
  lastMicros = micros;
  return formatRunId(micros);
}

export function formatRunId(micros: bigint): string {
  const d = new Date(Number(micros / 1000n));
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const date = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}`;
  const time = `${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
  const frac = String(micros % 1_000_000n).padStart(6, '0');
  return `run_${date}_${time}_${frac}`;
}

export const RUN_ID_PATTERN = /^run_\d{8}_\d{6}_\d{6}$/;

export function isRunId(s: unknown): s is string {
  return typeof s === 'string' && RUN_ID_PATTERN.test(s);
}
