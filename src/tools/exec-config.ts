/** Defaults, clamps and environment overrides of the exec/process tools. */

export interface ExecLimits {
  /** Foreground wait before auto-backgrounding (ms, clamp 10–120,000). */
  yieldMs: number;
  /** Total output kept per session (chars); the tail is kept, cuts are flagged. */
  maxOutputChars: number;
  /** Unpolled output kept per stream (chars). */
  pendingMaxOutputChars: number;
  /** Short tail shown in results and notices (chars). */
  tailChars: number;
  /** How long finished sessions stay in memory (ms, clamp 1 min–3 h). */
  jobTtlMs: number;
  /** At most this many finished sessions are kept; the oldest go first. */
  maxFinishedSessions: number;
  /** Default timeout (s); 0 = none. */
  timeoutSec: number;
  /** SIGTERM → SIGKILL grace (ms). */
  killGraceMs: number;
}

export const EXEC_DEFAULTS: Readonly<ExecLimits> = Object.freeze({
  yieldMs: 10_000,
  maxOutputChars: 200_000,
  pendingMaxOutputChars: 30_000,
  tailChars: 2_000,
  jobTtlMs: 30 * 60_000,
  maxFinishedSessions: 50,
  timeoutSec: 1_800,
  killGraceMs: 3_000,
});

export const YIELD_MS_RANGE = [10, 120_000] as const;
export const JOB_TTL_MS_RANGE = [60_000, 3 * 60 * 60_000] as const;
/** Linux refuses a single argv string above 128 KiB (MAX_ARG_STRLEN); stay well below with a clear error. */
export const MAX_COMMAND_CHARS = 65_536;
export const MAX_POLL_WAIT_MS = 30_000;
/** setTimeout's longest delay (about 24.8 days); a longer one fires at once (TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2_147_483_647;

export function clamp(n: number, [lo, hi]: readonly [number, number]): number {
  return Math.min(hi, Math.max(lo, n));
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
}

/** Reads RUNTRAIL_EXEC_* overrides; unparsable values fall back to the default rather than failing a run. */
export function readExecLimits(env: NodeJS.ProcessEnv = process.env): ExecLimits {
  const yieldMs = positiveInt(env.RUNTRAIL_EXEC_YIELD_MS);
  const ttl = positiveInt(env.RUNTRAIL_EXEC_JOB_TTL_MS);
  const timeout = env.RUNTRAIL_EXEC_TIMEOUT_SEC === '0' ? 0 : positiveInt(env.RUNTRAIL_EXEC_TIMEOUT_SEC);
  return {
    yieldMs: clamp(yieldMs ?? EXEC_DEFAULTS.yieldMs, YIELD_MS_RANGE),
    maxOutputChars: positiveInt(env.RUNTRAIL_EXEC_MAX_OUTPUT_CHARS) ?? EXEC_DEFAULTS.maxOutputChars,
    pendingMaxOutputChars: positiveInt(env.RUNTRAIL_EXEC_PENDING_MAX_OUTPUT_CHARS) ?? EXEC_DEFAULTS.pendingMaxOutputChars,
    tailChars: positiveInt(env.RUNTRAIL_EXEC_TAIL_CHARS) ?? EXEC_DEFAULTS.tailChars,
    jobTtlMs: clamp(ttl ?? EXEC_DEFAULTS.jobTtlMs, JOB_TTL_MS_RANGE),
    maxFinishedSessions: EXEC_DEFAULTS.maxFinishedSessions,
    timeoutSec: timeout ?? EXEC_DEFAULTS.timeoutSec,
    killGraceMs: EXEC_DEFAULTS.killGraceMs,
  };
}

/** Variables a shell needs to behave; everything else of the server (API keys, tokens) stays out. */
const BASE_ENV_KEYS = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TMPDIR', 'TZ', 'USER', 'LOGNAME', 'SHELL'] as const;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function minimalBaseEnv(parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of BASE_ENV_KEYS) {
    const v = parent[k];
    if (typeof v === 'string') env[k] = v;
  }
  env.PATH ??= DEFAULT_PATH;
  env.LANG ??= 'C.UTF-8';
  return env;
}

/** Returns an error message naming the bad key, or null. */
export function checkEnvVars(env: Record<string, string>): string | null {
  for (const [k, v] of Object.entries(env)) {
    if (k === '' || k.includes('=') || k.includes('\0')) return `env key ${JSON.stringify(k)} is not a valid variable name`;
    if (typeof v !== 'string') return `env.${k} must be a string`;
    if (v.includes('\0')) return `env.${k} contains a NUL byte`;
  }
  return null;
}
