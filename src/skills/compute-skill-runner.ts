/**
 * Runs a compute-entry skill (one that names an executable) as a child in the run's workspace, through the
 * same supervisor as exec. Its stdout speaks JSON lines — `progress`, `log`, one `result` — that
 * become process events; anything else is logged, never fatal. Memory stays bounded whatever the
 * child prints; timeouts, cancel and floods end the whole process group.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { OperationReporter } from '../events/operation-reporter-types.js';
import type { ProcessRegistry } from '../tools/process-registry.js';
import type { ProcessSession } from '../tools/process-session.js';
import { ByteTailBuffer } from '../tools/byte-tail-buffer.js';

export interface ComputeSkillEntry {
  /** `node` runs this Node; a path with `/` is relative to the skill folder; else looked up in PATH. */
  command: string;
  /** `{skill_dir}` is replaced by the skill folder. */
  args?: string[];
  timeout_s?: number;
}

export interface ComputeSkillSpec {
  name: string;
  dir: string;
  entry: ComputeSkillEntry;
}

export interface RunComputeSkillOptions {
  registry: ProcessRegistry;
  scopeKey: string;
  skill: ComputeSkillSpec;
  /** The run workspace: the child's cwd. */
  cwd: string;
  /** Sent to the child's stdin as one JSON line. */
  input?: unknown;
  env?: Record<string, string>;
  /** Default: entry.timeout_s, else 10 minutes. */
  timeoutMs?: number;
  /** The skill's operation: started, progress by stage, then a terminal status. */
  reporter?: OperationReporter;
  signal?: AbortSignal;
  /** stdout + stderr beyond this ends the skill (default 64 MiB). */
  maxOutputBytes?: number;
  /** A longer stdout line is dropped as garbage (default 4 MiB, also the bound on `result`). */
  maxLineChars?: number;
}

export interface SkillLogLine {
  level: string;
  message: string;
}

export interface ComputeSkillOutcome {
  ok: boolean;
  skill: string;
  data?: unknown;
  logs: SkillLogLine[];
  /** Lines that were not protocol JSON (counted; the first ones are in `logs`). */
  garbageLines: number;
  progressEvents: number;
  stderr: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  diagnosis?: DiagnosisInit;
}

export const DEFAULT_SKILL_TIMEOUT_MS = 10 * 60_000;
const MAX_LOGS = 200;
const STDERR_KEEP = 20_000;

type Failure = { code: string; summary: string; hint?: string; retryable?: boolean };

export async function runComputeSkill(opts: RunComputeSkillOptions): Promise<ComputeSkillOutcome> {
  const { skill, reporter } = opts;
  const started = Date.now();
  const maxOutputBytes = opts.maxOutputBytes ?? 64 * 1024 * 1024;
  const maxLine = opts.maxLineChars ?? 4 * 1024 * 1024;
  const logs: SkillLogLine[] = [];
  const stderr = new ByteTailBuffer(STDERR_KEEP);
  let garbage = 0;
  let progressEvents = 0;
  let result: { data: unknown } | null = null;
  let failure: Failure | null = null;

  const outcome = (session: ProcessSession | null, ok: boolean): ComputeSkillOutcome => {
    const diagnosis: DiagnosisInit | undefined = failure
      ? {
          code: failure.code,
          severity: failure.code === 'skill_cancelled' ? 'warning' : 'error',
          summary: failure.summary,
          detail:
            stderr.tail(1000) ||
            logs
              .slice(-5)
              .map((l) => `${l.level}: ${l.message}`)
              .join('\n'),
          hint: failure.hint ?? '',
          retryable: failure.retryable ?? false,
        }
      : undefined;
    return {
      ok,
      skill: skill.name,
      ...(ok && result ? { data: result.data } : {}),
      logs,
      garbageLines: garbage,
      progressEvents,
      stderr: stderr.toString(),
      exitCode: session?.exitCode ?? null,
      signal: session?.signal ?? null,
      durationMs: Date.now() - started,
      ...(diagnosis ? { diagnosis } : {}),
    };
  };

  const fail = (f: Failure, session: ProcessSession | null): ComputeSkillOutcome => {
    failure ??= f;
    if (failure.code === 'skill_cancelled') reporter?.cancel(failure.summary);
    else reporter?.fail(failure.summary, { code: failure.code });
    return outcome(session, false);
  };

  const log = (level: string, message: string) => {
    logs.push({ level, message: message.length > 2000 ? `${message.slice(0, 2000)}…` : message });
    if (logs.length > MAX_LOGS) logs.shift();
  };

  reporter?.start(`skill ${skill.name}`, { skill: skill.name });
  if (opts.signal?.aborted) return fail({ code: 'skill_cancelled', summary: `skill ${skill.name} was cancelled before it started` }, null);

  const file =
    skill.entry.command === 'node' ? process.execPath : skill.entry.command.includes('/') ? resolve(skill.dir, skill.entry.command) : skill.entry.command;
  const args = (skill.entry.args ?? []).map((a) => a.replaceAll('{skill_dir}', skill.dir));
  const timeoutMs = opts.timeoutMs ?? (skill.entry.timeout_s ? skill.entry.timeout_s * 1000 : DEFAULT_SKILL_TIMEOUT_MS);

  let session: ProcessSession;
  try {
    session = await opts.registry.start({
      scopeKey: opts.scopeKey,
      command: [skill.entry.command, ...args].join(' '),
      argv: { file, args },
      cwd: opts.cwd,
      env: {
        ...opts.registry.baseEnv(opts.scopeKey),
        ...opts.env,
        RUNTRAIL_SKILL_NAME: skill.name,
        RUNTRAIL_SKILL_DIR: skill.dir,
        RUNTRAIL_WORKSPACE: opts.cwd,
      },
      timeoutMs,
      notifyOnExit: false,
      // in the sandbox: the run folder writable, the skill's own folder readable
      sandbox: { writable: [opts.cwd], readable: [skill.dir, ...moduleFoldersAbove(skill.dir)] },
    });
  } catch (e) {
    return fail({ code: 'skill_spawn_failed', summary: `skill ${skill.name} could not start: ${(e as Error).message}` }, null);
  }

  const handleLine = (line: string) => {
    const t = line.trim();
    if (t === '') return;
    let msg: unknown;
    try {
      msg = JSON.parse(t);
    } catch {
      msg = undefined;
    }
    const m = msg && typeof msg === 'object' && !Array.isArray(msg) ? (msg as Record<string, unknown>) : null;
    if (m?.type === 'progress') {
      progressEvents++;
      reporter?.progress({
        stage: typeof m.stage === 'string' ? m.stage : undefined,
        current: typeof m.current === 'number' ? m.current : undefined,
        total: typeof m.total === 'number' ? m.total : undefined,
        message: typeof m.message === 'string' ? m.message : undefined,
        payload: m.payload,
      });
    } else if (m?.type === 'log') {
      log(typeof m.level === 'string' ? m.level : 'info', typeof m.message === 'string' ? m.message : JSON.stringify(m.message));
    } else if (m?.type === 'result' && 'data' in m) {
      if (result) log('warning', 'a second result line was ignored');
      else result = { data: m.data };
    } else {
      garbage++;
      if (garbage <= 20) log('stdout', t.length > 500 ? `${t.slice(0, 500)}…` : t);
    }
  };

  // Line splitter with a bounded partial line: an endless line is dropped, not buffered.
  let partial = '';
  let skipping = false;
  let flooded = false;
  const unsubscribe = session.onOutput((stream, text) => {
    if (stream === 'stderr') stderr.append(Buffer.from(text));
    else {
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const piece = text.slice(start, nl);
        if (!skipping) handleLine(partial + piece);
        partial = '';
        skipping = false;
        start = nl + 1;
      }
      if (!skipping) {
        partial += text.slice(start);
        if (partial.length > maxLine) {
          garbage++;
          log('warning', `a stdout line longer than ${maxLine} chars was dropped`);
          partial = '';
          skipping = true;
        }
      }
    }
    if (!flooded && session.bytes.stdout + session.bytes.stderr > maxOutputBytes) {
      flooded = true;
      failure ??= {
        code: 'skill_output_flood',
        summary: `skill ${skill.name} printed more than ${maxOutputBytes} bytes and was stopped`,
        hint: 'A compute skill should write bulk data to files and print only JSON lines.',
      };
      void session.end('kill');
    }
  });

  const onAbort = () => {
    failure ??= { code: 'skill_cancelled', summary: `skill ${skill.name} was cancelled` };
    void session.end('cancel');
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (session.stdinOpen) {
    session.write(`${JSON.stringify(opts.input ?? {})}\n`);
    session.endInput();
  }

  await session.done;
  opts.signal?.removeEventListener('abort', onAbort);
  unsubscribe();
  if (!skipping && partial) handleLine(partial);
  opts.registry.forget(session);

  if (failure) return fail(failure, session);
  if (session.spawnError) return fail({ code: 'skill_spawn_failed', summary: `skill ${skill.name} could not start: ${session.spawnError}` }, session);
  if (session.timedOut)
    return fail(
      { code: 'skill_timeout', summary: `skill ${skill.name} did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped`, retryable: true },
      session,
    );
  if (session.exitCode !== 0) {
    const how = session.exitCode !== null ? `exited with code ${session.exitCode}` : `was killed by ${session.signal}`;
    return fail({ code: 'skill_failed', summary: `skill ${skill.name} ${how}` }, session);
  }
  if (!result)
    return fail(
      { code: 'skill_no_result', summary: `skill ${skill.name} exited without a result line`, hint: 'Print one {"type":"result","data":...} line on stdout.' },
      session,
    );
  reporter?.complete(`skill ${skill.name} completed`, { skill: skill.name, durationMs: Date.now() - started });
  return outcome(session, true);
}

/** The node_modules folders Node would resolve a skill's imports from (its own and its ancestors'). */
function moduleFoldersAbove(dir: string): string[] {
  const out: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    const nm = join(d, 'node_modules');
    if (existsSync(nm)) out.push(nm);
    if (dirname(d) === d) return out;
  }
}
