/**
 * The offline model's brain for shell_task: exec the command (backgrounded when long), follow it
 * with process poll until it exits, read the log tail, write report.md, answer. Deterministic.
 */
import type { ModelTurn, OfflineProcedure } from '../../runtime/agent.js';
import { parseExitLine, parseRunningSession } from '../../tools/exec-results.js';
import { failures, lastOk, toolResults, type SeenToolResult } from '../shared/conversation.js';
import { shellTaskInputSchema, type ShellTaskInput } from './input-schema.js';
import { buildShellTaskReport, exitSummary, SHELL_TASK_REPORT, type ShellTaskOutcome } from './shell-task-report.js';

const YIELD_MS = 5_000;
const POLL_WAIT_MS = 30_000;
/** 30 s each: an hour of following before giving up on a silent command. */
const MAX_POLLS = 120;

/** The run input as the system prompt shows it (section "Run Input", a JSON block). */
export function runInputFromSystem(system: string): ShellTaskInput | null {
  const m = /## Run Input\s*\n+```json\n([\s\S]*?)\n```/.exec(system);
  if (!m) return null;
  try {
    const r = shellTaskInputSchema.safeParse(JSON.parse(m[1]));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

const sessionOf = (r: SeenToolResult): string | undefined => {
  const a = r.args as { sessionId?: unknown } | undefined;
  return typeof a?.sessionId === 'string' ? a.sessionId : undefined;
};

export const shellTaskOfflineProcedure: OfflineProcedure = (state): ModelTurn => {
  const input = runInputFromSystem(state.system);
  if (!input) return { text: 'I could not find the command to run in the run input.' };
  const results = toolResults(state.messages);

  const written = lastOk(results, 'write_markdown_artifact');
  if (written) return { text: finalAnswer(input, outcomeSoFar(input, results)) };
  const writeFailures = failures(results, 'write_markdown_artifact');
  if (writeFailures.length >= 2) return { text: `I ran the command but could not write ${SHELL_TASK_REPORT}: ${writeFailures.at(-1)?.content.slice(0, 300)}` };

  const execs = results.filter((r) => r.name === 'exec');
  if (execs.length === 0) {
    return {
      reasoning: 'Step 1: run the command; if it takes longer than a few seconds it continues in the background.',
      toolCalls: [{ name: 'exec', args: { command: input.command, ...(input.workdir ? { workdir: input.workdir } : {}), yieldMs: YIELD_MS } }],
    };
  }
  const last = execs[execs.length - 1];
  const sessionId = parseRunningSession(last.content);
  if (sessionId) {
    const mine = results.filter((r) => r.name === 'process' && sessionOf(r) === sessionId);
    const ended = mine.some((r) => parseExitLine(r.content));
    const logged = mine.some((r) => (r.args as { action?: string }).action === 'log' && r.ok);
    if (!ended) {
      if (mine.length >= MAX_POLLS)
        return { reasoning: 'The command is still silent after an hour; stopping it.', toolCalls: [{ name: 'process', args: { action: 'kill', sessionId } }] };
      return {
        reasoning: `Step 1: the command runs in the background (${sessionId}); waiting for it.`,
        // polls are `repeatable`: the loop's repeated-call guard does not count them
        toolCalls: [{ name: 'process', args: { action: 'poll', sessionId, waitMs: POLL_WAIT_MS } }],
      };
    }
    if (!logged) {
      return {
        reasoning: 'Step 1: it has exited; reading the end of its output.',
        toolCalls: [{ name: 'process', args: { action: 'log', sessionId, limit: 40 } }],
      };
    }
  }
  const outcome = outcomeSoFar(input, results);
  return {
    reasoning: `Step 2: writing ${SHELL_TASK_REPORT} (exit code ${exitSummary(outcome)}).`,
    toolCalls: [{ name: 'write_markdown_artifact', args: { path: SHELL_TASK_REPORT, content: buildShellTaskReport(outcome) } }],
  };
};

function outcomeSoFar(input: ShellTaskInput, results: SeenToolResult[]): ShellTaskOutcome {
  const execs = results.filter((r) => r.name === 'exec');
  const last = execs[execs.length - 1];
  const base = { command: input.command, workdir: input.workdir };
  if (!last) return { ...base, exit: null, output: '' };
  const sessionId = parseRunningSession(last.content);
  if (!sessionId) {
    const exit = parseExitLine(last.content);
    if (!exit && !last.ok) return { ...base, exit: null, output: '', error: last.content.replace(/^exec: /, '').slice(0, 500) };
    return { ...base, exit, output: last.content };
  }
  const mine = results.filter((r) => r.name === 'process' && sessionOf(r) === sessionId);
  const log = [...mine].reverse().find((r) => (r.args as { action?: string }).action === 'log' && r.ok);
  const exitFrom = [...mine].reverse().find((r) => parseExitLine(r.content));
  return { ...base, exit: exitFrom ? parseExitLine(exitFrom.content) : null, output: log?.content ?? '' };
}

function finalAnswer(input: ShellTaskInput, o: ShellTaskOutcome): string {
  const d = o.exit?.durationS != null ? ` in ${o.exit.durationS.toFixed(1)} s` : '';
  return `Ran \`${input.command}\`: exit code ${exitSummary(o)}${d}. The report is in artifacts/${SHELL_TASK_REPORT}.`;
}
