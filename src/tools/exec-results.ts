/** Result shapes shared by exec and process: `{ ok, content, details }`, failures with a Diagnosis. */
import { describeDenial, findSandboxDenial } from '../sandbox/sandbox-denial.js';
import type { ToolResult } from './tool.js';
import type { ProcessSession } from './process-session.js';

export function badInput(tool: string, message: string, hint = ''): ToolResult {
  return {
    ok: false,
    content: `${tool}: ${message}`,
    details: { status: 'failed', error: message },
    diagnosis: { code: `${tool}_bad_input`, severity: 'error', summary: message, hint, retryable: false },
  };
}

export function unknownSession(sessionId: string): ToolResult {
  const message = `no session ${JSON.stringify(sessionId)} in this run`;
  return {
    ok: false,
    content: `process: ${message}. Use action "list" to see this run's sessions.`,
    details: { status: 'failed', sessionId, error: message },
    diagnosis: {
      code: 'process_unknown_session',
      severity: 'error',
      summary: message,
      hint: 'Sessions end up cleared after their TTL; foreground commands never get one.',
      retryable: false,
    },
  };
}

/** The `details` every exec/process result about one session carries. */
export function sessionDetails(s: ProcessSession, tailChars: number): Record<string, unknown> {
  return {
    status: s.status,
    sessionId: s.id,
    pid: s.pid ?? null,
    exitCode: s.exitCode,
    signal: s.signal,
    timedOut: s.timedOut,
    truncated: s.truncated,
    tail: s.tail(tailChars),
    name: s.name,
    pty: s.usesPty,
    sandbox: s.sandbox,
    durationMs: (s.endedAt ?? Date.now()) - s.startedAt,
    ...(s.ptyWarning ? { warning: s.ptyWarning } : {}),
    ...(s.endCause ? { endedBy: s.endCause } : {}),
  };
}

export function describeExit(s: ProcessSession): string {
  const after = s.endedAt !== null ? ` after ${((s.endedAt - s.startedAt) / 1000).toFixed(1)} s` : '';
  if (s.spawnError) return `Command could not start: ${s.spawnError}`;
  if (s.timedOut) return `Command timed out and was killed${s.signal ? ` (${s.signal})` : ''}${after}.`;
  // the reason first: the status line stays the last line, as parseExitLine reads it
  if (s.endCause === 'disk' && s.stopReason) return `${s.stopReason}\nCommand was ended (disk)${s.signal ? ` by ${s.signal}` : ''}${after}.`;
  if (s.endCause) return `Command was ended (${s.endCause})${s.signal ? ` by ${s.signal}` : ''}${after}.`;
  if (s.exitCode !== null) return `Process exited with code ${s.exitCode}${after}.`;
  return `Process was killed by ${s.signal ?? 'a signal'}${after}.`;
}

/** The Diagnosis of a finished, failed session. */
export function exitDiagnosis(s: ProcessSession, tailChars: number): ToolResult['diagnosis'] {
  const detail = s.tail(Math.min(tailChars, 500));
  if (s.spawnError) return { code: 'exec_spawn_failed', severity: 'error', summary: describeExit(s), detail, retryable: false };
  if (s.timedOut)
    return {
      code: 'exec_timeout',
      severity: 'error',
      summary: describeExit(s),
      detail,
      hint: 'Raise `timeout` (seconds, 0 = none) or run it with background: true.',
      retryable: true,
    };
  if (s.endCause === 'disk')
    return {
      code: 'sandbox_disk_cap',
      severity: 'error',
      summary: describeExit(s),
      detail,
      hint: 'The operator raises the cap with sandbox.limits.disk_mb in config.json.',
      retryable: false,
    };
  if (s.endCause) return { code: 'exec_cancelled', severity: 'warning', summary: describeExit(s), detail, retryable: false };
  const refused = s.sandboxDenials[0];
  const denial = refused ? ({ kind: 'host_refused', target: refused } as const) : s.sandboxed ? findSandboxDenial(s.tail(tailChars)) : null;
  if (denial) {
    const { summary, hint } = describeDenial(denial);
    return { code: 'sandbox_denied', severity: 'error', summary: `${describeExit(s)} ${summary}`, detail, hint, retryable: false };
  }
  return {
    code: s.exitCode !== null ? 'exec_exit_nonzero' : 'exec_killed',
    severity: 'error',
    summary: describeExit(s),
    detail,
    retryable: false,
  };
}

export function cutNote(dropped: number, what: string): string {
  return dropped > 0 ? `[${dropped} earlier bytes of ${what} were cut to stay within the output cap]\n` : '';
}

export interface ParsedExit {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  endedBy: string | null;
  durationS: number | null;
}

const EXIT_LINE =
  /(?:Process exited with code (-?\d+)|Process was killed by (\w+)|Command timed out and was killed(?: \((\w+)\))?|Command was ended \((\w+)\)(?: by (\w+))?)(?: after (\d+(?:\.\d+)?) s)?\.\s*$/;

/** Reads the status line `describeExit` ends every finished exec/poll/log result with; null while running. */
export function parseExitLine(content: string): ParsedExit | null {
  const m = EXIT_LINE.exec(content);
  if (!m) return null;
  return {
    exitCode: m[1] !== undefined ? Number(m[1]) : null,
    signal: m[2] ?? m[3] ?? m[5] ?? null,
    timedOut: content.slice(m.index).startsWith('Command timed out'),
    endedBy: m[4] ?? null,
    durationS: m[6] !== undefined ? Number(m[6]) : null,
  };
}

/** `exec_…` id from a "Command still running (session exec_…" result. */
export function parseRunningSession(content: string): string | null {
  return /Command still running \(session (exec_[0-9a-f]+)/.exec(content)?.[1] ?? null;
}
