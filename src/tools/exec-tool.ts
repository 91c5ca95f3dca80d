/** The `exec` tool: run a shell command, foreground or background, inside the run's roots. */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { ToolDefinition, ToolExecutionContext, ToolResult } from './tool.js';
import { checkEnvVars, clamp, MAX_COMMAND_CHARS, MAX_TIMER_MS, YIELD_MS_RANGE } from './exec-config.js';
import { badInput, cutNote, describeExit, exitDiagnosis, sessionDetails } from './exec-results.js';
import type { ProcessRegistry } from './process-registry.js';
import type { ProcessSession } from './process-session.js';

export const execParameters = z.object({
  command: z.string().describe('Shell command to run (/bin/sh -c).'),
  yieldMs: z.number().int().optional().describe('Wait this long (ms, 10–120000, default 10000) before backgrounding.'),
  background: z.boolean().optional().describe('Run in the background at once and return a sessionId.'),
  timeout: z.number().min(0).optional().describe('Kill after this many seconds (default 1800, 0 = none).'),
  pty: z.boolean().optional().describe('Run in a pseudo-terminal (for programs that need a TTY).'),
  workdir: z.string().optional().describe('Working directory, inside the run workspace.'),
  env: z.record(z.string(), z.string()).optional().describe('Extra environment variables.'),
  elevated: z.boolean().optional().describe('Run outside the workspace roots; only when the server allows it.'),
});
export type ExecArgs = z.infer<typeof execParameters>;

export interface ExecToolOptions {
  registry: ProcessRegistry;
  /** The run the sessions belong to. */
  scopeKey: string;
  /** Default working directory (the run workspace). */
  cwd: string;
  /** `workdir` must resolve inside one of these (default: [cwd]). */
  allowedRoots?: string[];
  /** Merged over the minimal base environment, under the call's own `env`. */
  env?: Record<string, string>;
  /** Lets `elevated: true` work outside the roots (default false). */
  allowElevated?: boolean;
  /** Without the process tool, exec waits for the end and ignores yieldMs/background (default true). */
  processToolEnabled?: boolean;
  notifyOnExit?: boolean;
  notifyOnExitEmptySuccess?: boolean;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export function createExecTool(opts: ExecToolOptions): ToolDefinition<ExecArgs> {
  const { registry, scopeKey } = opts;
  const roots = (opts.allowedRoots ?? [opts.cwd]).map(real);
  // the roots beside the run's own folder were configured by the operator or the run's creator
  const workdirs = roots.filter((r) => r !== real(opts.cwd));
  const processTool = opts.processToolEnabled ?? true;

  return {
    name: 'exec',
    description:
      'Run a shell command. Returns its output when it ends within yieldMs; otherwise it keeps running in ' +
      'the background and you get a sessionId for the process tool (you are also told when it exits).',
    parameters: execParameters,
    kind: 'tool',
    // leaving the sandbox is the operator's to allow: at once, or per call by a person
    needsApproval: (a) => {
      if (a.elevated !== true || opts.allowElevated) return null;
      const { policy } = registry.sandboxOf(scopeKey);
      return policy.mode === 'on' && policy.elevated === 'ask' ? 'elevated: this command would run on the host, outside the sandbox' : null;
    },
    // The executor's own deadline must outlast ours: the longest yield, or the whole run without the process tool.
    // (a timer cannot hold more than MAX_TIMER_MS: beyond it the deadline would fire at once)
    timeoutMs: processTool
      ? YIELD_MS_RANGE[1] + 30_000
      : registry.limits.timeoutSec > 0
        ? Math.min(registry.limits.timeoutSec * 1000 + 30_000, MAX_TIMER_MS)
        : 3 * 60 * 60_000,
    async execute(rawArgs: ExecArgs, ctx?: ToolExecutionContext): Promise<ToolResult> {
      const parsed = execParameters.safeParse(rawArgs);
      if (!parsed.success) return badInput('exec', `invalid arguments: ${z.prettifyError(parsed.error)}`);
      const args = parsed.data;
      const command = args.command;
      if (command.trim() === '') return badInput('exec', 'command is empty', 'Pass the shell command to run in `command`.');
      if (command.length > MAX_COMMAND_CHARS)
        return badInput('exec', `command is ${command.length} chars; the limit is ${MAX_COMMAND_CHARS}`, 'Write long scripts to a file and run the file.');
      if (command.includes('\0')) return badInput('exec', 'command contains a NUL byte');
      const { policy } = registry.sandboxOf(scopeKey);
      const elevatedMode = opts.allowElevated ? 'allow' : policy.mode === 'on' ? policy.elevated : 'off';
      if (args.elevated && elevatedMode === 'off')
        return badInput(
          'exec',
          "elevated mode is off on this server (the operator's config.json sandbox.elevated)",
          'Run without `elevated`, inside the sandbox and the workspace.',
        );
      // `needsApproval` made the executor ask a person; called any other way, an ask-mode elevated call cannot run
      if (args.elevated && elevatedMode === 'ask' && !ctx?.approvedByPerson)
        return badInput(
          'exec',
          "elevated needs a person's approval on this server, and this call was not approved",
          'Run without `elevated`, inside the sandbox.',
        );

      const cwd = real(resolve(opts.cwd, args.workdir ?? '.'));
      if (!args.elevated && !roots.some((r) => inside(r, cwd)))
        return badInput('exec', `workdir ${JSON.stringify(args.workdir)} is outside the allowed roots`, `Use a path inside ${roots.join(', ')}.`);
      let isDir = false;
      try {
        isDir = statSync(cwd).isDirectory();
      } catch {
        /* reported below */
      }
      if (!isDir) return badInput('exec', `workdir ${JSON.stringify(args.workdir ?? opts.cwd)} does not exist or is not a directory`);

      // inside the sandbox the base is its fixed small set; an elevated call gets the host's minimal one
      const env = { ...registry.baseEnv(scopeKey, args.elevated === true), ...opts.env, ...args.env };
      const envError = checkEnvVars(env);
      if (envError) return badInput('exec', envError);

      const limits = registry.limits;
      const timeoutSec = args.timeout ?? limits.timeoutSec;
      if (ctx?.signal?.aborted) return cancelledBeforeStart();

      const reporter = ctx?.reporter?.child({ targetType: 'tool', source: 'tool' });
      let session: ProcessSession;
      try {
        session = await registry.start({
          scopeKey,
          command,
          cwd,
          env,
          pty: args.pty,
          // a timeout beyond what a timer can hold would fire at once and kill the command
          timeoutMs: Math.min(timeoutSec * 1000, MAX_TIMER_MS),
          reporter,
          notifyOnExit: opts.notifyOnExit,
          notifyOnExitEmptySuccess: opts.notifyOnExitEmptySuccess,
          sandbox: args.elevated ? 'host' : { writable: roots, workdirs },
        });
      } catch (e) {
        reporter?.fail((e as Error).message);
        return badInput('exec', `could not start: ${(e as Error).message}`);
      }

      const background = processTool && args.background === true;
      if (background) {
        registry.markBackgrounded(session);
        return runningResult(session, limits.tailChars);
      }
      const yieldMs = processTool ? clamp(args.yieldMs ?? limits.yieldMs, YIELD_MS_RANGE) : null;
      const outcome = await race(session, yieldMs, ctx?.signal);
      if (outcome === 'yield') {
        registry.markBackgrounded(session);
        return runningResult(session, limits.tailChars);
      }
      if (outcome === 'abort') await session.end('cancel');
      registry.forget(session);
      return finishedResult(session, limits.tailChars);
    },
  };
}

function race(session: ProcessSession, yieldMs: number | null, signal: AbortSignal | undefined): Promise<'done' | 'yield' | 'abort'> {
  return new Promise((resolveRace) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => settle('abort');
    const settle = (v: 'done' | 'yield' | 'abort') => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolveRace(v);
    };
    void session.done.then(() => settle('done'));
    if (yieldMs !== null) timer = setTimeout(() => settle('yield'), yieldMs);
    if (signal) {
      if (signal.aborted) settle('abort');
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}

function cancelledBeforeStart(): ToolResult {
  return {
    ok: false,
    content: 'exec: cancelled before the command started',
    details: { status: 'failed' },
    diagnosis: { code: 'exec_cancelled', severity: 'warning', summary: 'cancelled before start', retryable: false },
  };
}

function runningResult(s: ProcessSession, tailChars: number): ToolResult {
  const tail = s.tail(tailChars);
  const warn = s.ptyWarning ? `Warning: ${s.ptyWarning}\n` : '';
  return {
    ok: true,
    content:
      `${warn}Command still running (session ${s.id}, pid ${s.pid ?? '?'}). ` +
      `Use process poll/log with sessionId "${s.id}" to follow it; you will be told when it exits.` +
      (tail ? `\n\nOutput so far:\n${tail}` : ''),
    details: { ...sessionDetails(s, tailChars), status: 'running' },
  };
}

function finishedResult(s: ProcessSession, tailChars: number): ToolResult {
  const warn = s.ptyWarning ? `Warning: ${s.ptyWarning}\n` : '';
  const out = s.fullOutput();
  const dropped = s.outputDroppedBytes;
  const body = out === '' ? '(no output)' : `${cutNote(dropped, 'output')}${out}`;
  const ok = s.status === 'completed';
  const content = `${warn}${body}\n\n${describeExit(s)}`;
  return {
    ok,
    content,
    details: sessionDetails(s, tailChars),
    ...(ok ? {} : { diagnosis: exitDiagnosis(s, tailChars) }),
  };
}
