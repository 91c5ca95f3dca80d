/** report.md of a shell task: command, exit code, duration, output tail. */
import type { ParsedExit } from '../../tools/exec-results.js';

export const SHELL_TASK_REPORT = 'report.md';
export const SHELL_TASK_REPORT_HEADINGS = ['Command', 'Exit code', 'Duration', 'Output'];
export const REPORT_TAIL_LINES = 40;
const REPORT_TAIL_CHARS = 4_000;

export interface ShellTaskOutcome {
  command: string;
  workdir?: string;
  exit: ParsedExit | null;
  /** Output as the tools returned it (status lines and notes are stripped here). */
  output: string;
  /** Set when the command could not run at all. */
  error?: string;
}

/** A fence longer than any backtick run inside, so output can never close it. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

export function outputTail(raw: string): { text: string; lines: number; cut: boolean } {
  const cleaned = raw
    .split('\n')
    .filter((l) => !/^\[(showing lines|earlier output was cut|\d+ earlier bytes of)/.test(l))
    .join('\n')
    .replace(/\n*(Process exited with code|Process was killed by|Command timed out|Command was ended|Process still running)[^\n]*$/, '')
    .replace(/^\(no (new )?output\)$/, '')
    .trimEnd();
  const lines = cleaned === '' ? [] : cleaned.split('\n');
  let tail = lines.slice(-REPORT_TAIL_LINES).join('\n');
  if (tail.length > REPORT_TAIL_CHARS) tail = tail.slice(tail.length - REPORT_TAIL_CHARS);
  return { text: tail, lines: Math.min(lines.length, REPORT_TAIL_LINES), cut: lines.length > REPORT_TAIL_LINES || tail.length >= REPORT_TAIL_CHARS };
}

export function exitSummary(o: ShellTaskOutcome): string {
  if (o.error) return `not run: ${o.error}`;
  const e = o.exit;
  if (!e) return 'unknown';
  if (e.timedOut) return `none: timed out and killed${e.signal ? ` (${e.signal})` : ''}`;
  if (e.endedBy) return `none: ended (${e.endedBy})${e.signal ? ` by ${e.signal}` : ''}`;
  if (e.exitCode === null) return `none: killed by ${e.signal ?? 'a signal'}`;
  return `${e.exitCode} (${e.exitCode === 0 ? 'success' : 'failure'})`;
}

export function buildShellTaskReport(o: ShellTaskOutcome): string {
  const cmdFence = fence(o.command);
  const tail = outputTail(o.output);
  const outFence = fence(tail.text);
  const duration = o.exit?.durationS != null ? `${o.exit.durationS.toFixed(1)} s` : 'unknown';
  return [
    '# Shell task report',
    '',
    '## Command',
    '',
    `${cmdFence}sh`,
    o.command,
    cmdFence,
    '',
    `Working directory: ${o.workdir ? `\`${o.workdir}\`` : 'the run folder'}`,
    '',
    '## Exit code',
    '',
    exitSummary(o),
    '',
    '## Duration',
    '',
    duration,
    '',
    '## Output',
    '',
    tail.text === '' ? '(no output)' : [`${tail.cut ? `Last ${tail.lines} lines` : 'Complete output'}:`, '', `${outFence}text`, tail.text, outFence].join('\n'),
    '',
  ].join('\n');
}
