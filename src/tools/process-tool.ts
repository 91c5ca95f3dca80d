/** The `process` tool: follow and steer the background sessions of this run. */
import { z } from 'zod';
import type { ToolDefinition, ToolResult } from './tool.js';
import { MAX_POLL_WAIT_MS } from './exec-config.js';
import { badInput, cutNote, describeExit, sessionDetails, unknownSession } from './exec-results.js';
import type { ProcessRegistry } from './process-registry.js';
import type { ProcessSession } from './process-session.js';

export const PROCESS_ACTIONS = ['list', 'poll', 'log', 'write', 'kill', 'clear', 'remove'] as const;
export const DEFAULT_LOG_LINES = 200;

export const processParameters = z.object({
  action: z.enum(PROCESS_ACTIONS).describe('list | poll | log | write | kill | clear | remove'),
  sessionId: z.string().optional().describe('Session from exec (all actions but list).'),
  waitMs: z.number().int().min(0).optional().describe('poll: wait up to this long (ms, max 30000) for new output or exit.'),
  offset: z.number().int().min(0).optional().describe('log: first line (0-based); omit for the last lines.'),
  limit: z.number().int().min(1).optional().describe('log: number of lines (default: the last 200).'),
  data: z.string().optional().describe('write: text to send to stdin.'),
  eof: z.boolean().optional().describe('write: close stdin after data.'),
});
export type ProcessArgs = z.infer<typeof processParameters>;

export interface ProcessToolOptions {
  registry: ProcessRegistry;
  scopeKey: string;
}

export function createProcessTool(opts: ProcessToolOptions): ToolDefinition<ProcessArgs> {
  const { registry, scopeKey } = opts;
  const tailChars = registry.limits.tailChars;

  return {
    name: 'process',
    description:
      'Manage background sessions started by exec: list, poll (new output + exit status), log (by line), ' +
      'write (stdin), kill, clear (finished only), remove (kill if running, then delete).',
    parameters: processParameters,
    kind: 'tool',
    // watching a session is meant to be repeated until it ends
    repeatable: (args) => args?.action === 'poll' || args?.action === 'log' || args?.action === 'list',
    async execute(rawArgs: ProcessArgs): Promise<ToolResult> {
      const parsed = processParameters.safeParse(rawArgs);
      if (!parsed.success) return badInput('process', `invalid arguments: ${z.prettifyError(parsed.error)}`);
      const args = parsed.data;
      if (args.action === 'list') return list();
      if (!args.sessionId) return badInput('process', `action "${args.action}" needs a sessionId`);
      const s = registry.get(scopeKey, args.sessionId);
      if (!s) return unknownSession(args.sessionId);
      switch (args.action) {
        case 'poll':
          return poll(s, args.waitMs ?? 0);
        case 'log':
          return log(s, args.offset, args.limit);
        case 'write':
          return write(s, args.data, args.eof === true);
        case 'kill':
          return kill(s);
        case 'clear':
          return clear(s);
        case 'remove':
          return remove(s);
      }
    },
  };

  function list(): ToolResult {
    const sessions = registry.list(scopeKey);
    const now = Date.now();
    const lines = sessions.map((s) => {
      const secs = Math.round(((s.endedAt ?? now) - s.startedAt) / 1000);
      const state = s.running ? 'running' : `${s.status} (${s.exitCode ?? s.signal})`;
      const cmd = s.command.length > 80 ? `${s.command.slice(0, 79)}…` : s.command;
      return `${s.id}  ${state}  ${secs}s  pid ${s.pid ?? '?'}  ${s.name} :: ${cmd}`;
    });
    return {
      ok: true,
      content: lines.length ? lines.join('\n') : 'No background sessions in this run.',
      details: { status: 'completed', sessions: sessions.map((s) => s.info()) },
    };
  }

  async function poll(s: ProcessSession, waitMs: number): Promise<ToolResult> {
    if (s.running && !s.hasPending()) await s.waitForActivity(Math.min(waitMs, MAX_POLL_WAIT_MS));
    const p = s.drainPending();
    const parts: string[] = [];
    if (p.stdout) parts.push(`${cutNote(p.droppedStdout, 'unpolled stdout')}${p.stdout}`);
    if (p.stderr) parts.push(`[stderr]\n${cutNote(p.droppedStderr, 'unpolled stderr')}${p.stderr}`);
    if (!p.stdout && !p.stderr) parts.push('(no new output)');
    if (s.running) parts.push('Process still running.');
    else {
      s.exitObserved = true;
      parts.push(describeExit(s));
    }
    return {
      ok: true,
      content: parts.join('\n'),
      details: {
        ...sessionDetails(s, tailChars),
        stdout: p.stdout,
        stderr: p.stderr,
        pendingTruncated: p.droppedStdout + p.droppedStderr > 0,
      },
    };
  }

  function log(s: ProcessSession, offset: number | undefined, limit: number | undefined): ToolResult {
    const text = s.fullOutput();
    const lines = text === '' ? [] : text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    let from: number;
    let to: number;
    if (offset === undefined) {
      to = lines.length;
      from = Math.max(0, to - (limit ?? DEFAULT_LOG_LINES));
    } else {
      from = Math.min(offset, lines.length);
      to = limit === undefined ? lines.length : Math.min(lines.length, from + limit);
    }
    const shown = lines.slice(from, to);
    const notes: string[] = [];
    if (s.truncated) notes.push(`[earlier output was cut; line 0 is the oldest line still kept]`);
    if (offset === undefined && limit === undefined && from > 0) notes.push(`[showing lines ${from}–${to - 1} of ${lines.length}; pass offset/limit to page]`);
    if (!s.running) s.exitObserved = true;
    const status = s.running ? 'Process still running.' : describeExit(s);
    return {
      ok: true,
      content: [...notes, shown.length ? shown.join('\n') : '(no output)', status].join('\n'),
      details: { ...sessionDetails(s, tailChars), offset: from, lines: shown.length, totalLines: lines.length },
    };
  }

  function write(s: ProcessSession, data: string | undefined, eof: boolean): ToolResult {
    if (!s.running) return badInput('process', `session ${s.id} has finished; nothing reads its stdin`, 'Start a new exec.');
    if (data === undefined && !eof) return badInput('process', 'write needs `data` (and/or eof: true)');
    if (!s.stdinOpen) return badInput('process', `stdin of session ${s.id} is closed`);
    if (data !== undefined && data !== '') s.write(data);
    if (eof) s.endInput();
    return {
      ok: true,
      content: `Wrote ${data?.length ?? 0} chars to ${s.id}${eof ? ' and closed stdin' : ''}.`,
      details: sessionDetails(s, tailChars),
    };
  }

  async function kill(s: ProcessSession): Promise<ToolResult> {
    if (!s.running) return badInput('process', `session ${s.id} has already finished (${describeExit(s)})`, 'Use clear to drop it.');
    await s.end('kill');
    s.exitObserved = true;
    return { ok: true, content: `Killed ${s.id}. ${describeExit(s)}`, details: sessionDetails(s, tailChars) };
  }

  function clear(s: ProcessSession): ToolResult {
    if (s.running) return badInput('process', `session ${s.id} is still running`, 'Use kill or remove to end it first.');
    registry.forget(s);
    return { ok: true, content: `Cleared ${s.id}.`, details: { ...sessionDetails(s, tailChars), removed: true } };
  }

  async function remove(s: ProcessSession): Promise<ToolResult> {
    const wasRunning = s.running;
    if (wasRunning) await s.end('kill');
    registry.forget(s);
    return {
      ok: true,
      content: `${wasRunning ? 'Killed and removed' : 'Removed'} ${s.id}.`,
      details: { ...sessionDetails(s, tailChars), removed: true },
    };
  }
}
