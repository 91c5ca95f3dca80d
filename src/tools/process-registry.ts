/**
 * Every supervised session of this Runtrail process, scoped by `scopeKey` (one per run): one run
 * cannot see or touch another's. Keeps finished background sessions for a TTL (max 50), queues
 * exit notices for the agent loop, and ends whole scopes on cancel and everything on shutdown.
 */
import { randomBytes } from 'node:crypto';
import type { OperationReporter } from '../events/operation-reporter-types.js';
import { type ExecLimits, readExecLimits, clamp, JOB_TTL_MS_RANGE } from './exec-config.js';
import { ProcessLedger } from './process-ledger.js';
import { SessionOutputFile, sessionOutputDirOf, sessionOutputPath } from './session-output-file.js';
import { ProcessSession } from './process-session.js';
import { spawnSupervised } from './supervised-child.js';
import { minimalBaseEnv } from './exec-config.js';
import { sandboxEnv } from '../sandbox/bwrap-command.js';
import { DiskBudget } from '../sandbox/disk-budget.js';
import { guardRepository, type RepositoryGuard } from '../sandbox/git-guard.js';
import { diskCapMb } from '../sandbox/sandbox-limits.js';
import { protectedOverlap } from '../sandbox/sandbox-paths.js';
import { launchSandboxed, type SandboxLaunch } from '../sandbox/sandbox-launch.js';
import { resolveSandboxPolicy, sandboxSummary, type SandboxPolicy } from '../sandbox/sandbox-policy.js';

/** How the processes of one scope (run) are sandboxed. */
export interface ScopeSandbox {
  policy: SandboxPolicy;
  /** Paths inside the writable roots that stay read-only (the run's own record). */
  readOnlyInside?: string[];
  /** Folders no configured workdir may cover or lie in (the data dir). */
  protectedDirs?: string[];
}

export interface ProcessRegistryOptions extends Partial<ExecLimits> {
  /** Queue `Exec completed …` notices when a background session ends (default true). */
  notifyOnExit?: boolean;
  /** Also for sessions that succeeded without output (default false). */
  notifyOnExitEmptySuccess?: boolean;
  /** Where RUNTRAIL_EXEC_* overrides are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The sandbox of scopes that were given none with `sandboxScope` (default: on, no network, default limits). */
  sandbox?: SandboxPolicy;
}

export interface StartSessionOptions {
  scopeKey: string;
  /** Shown in lists and events; run with /bin/sh -c unless `argv` is given. */
  command: string;
  /** Spawn this program directly (compute skills) instead of a shell. */
  argv?: { file: string; args: string[] };
  cwd: string;
  /** The child's complete environment. */
  env: Record<string, string>;
  pty?: boolean;
  /** 0 or absent = no timeout. */
  timeoutMs?: number;
  /** The session's own operation: gets started/running/terminal events. */
  reporter?: OperationReporter;
  notifyOnExit?: boolean;
  notifyOnExitEmptySuccess?: boolean;
  /**
   * The places the process works in (read-write) and reads (a skill's folder) when the scope is
   * sandboxed; `'host'` runs it outside the sandbox (an elevated call the caller has allowed).
   * `workdirs` are the writable places the operator or the run's creator configured (not the run's
   * own folder): a repository there when the scope first uses it stays read-only.
   */
  sandbox?: { writable: string[]; readable?: string[]; workdirs?: string[] } | 'host';
}

interface PendingNotice {
  session: ProcessSession;
  emptySuccessToo: boolean;
}

export class ProcessRegistry {
  readonly limits: ExecLimits;
  private readonly sessions = new Map<string, ProcessSession>();
  private readonly notices = new Map<string, PendingNotice[]>();
  /** Scopes whose live sessions are recorded on disk (a run's runtime/processes.json). */
  private readonly ledgers = new Map<string, ProcessLedger>();
  private readonly sandboxes = new Map<string, ScopeSandbox>();
  /** Per scope: the configured workdirs seen so far and the guard of the repository each held then. */
  private readonly repositoryGuards = new Map<string, Map<string, RepositoryGuard | null>>();
  /** Per scope: what its processes may add to the disk, watched while they run. */
  private readonly diskBudgets = new Map<string, DiskBudget>();
  private readonly defaultSandbox: SandboxPolicy;
  private readonly notifyOnExit: boolean;
  private readonly notifyOnExitEmptySuccess: boolean;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(opts: ProcessRegistryOptions = {}) {
    const fromEnv = readExecLimits(opts.env ?? process.env);
    const { notifyOnExit, notifyOnExitEmptySuccess, env: _env, sandbox, ...overrides } = opts;
    this.defaultSandbox = sandbox ?? resolveSandboxPolicy(undefined, undefined);
    this.limits = { ...fromEnv, ...stripUndefined(overrides) };
    this.limits.jobTtlMs = clamp(this.limits.jobTtlMs, JOB_TTL_MS_RANGE);
    this.notifyOnExit = notifyOnExit ?? true;
    this.notifyOnExitEmptySuccess = notifyOnExitEmptySuccess ?? false;
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.limits.jobTtlMs, 60_000));
    this.sweeper.unref();
  }

  /** Starts a supervised child in its own process group. */
  async start(opts: StartSessionOptions): Promise<ProcessSession> {
    if (this.closed) throw new Error('ProcessRegistry is shut down');
    if (!opts.scopeKey) throw new Error('scopeKey is required');
    const id = this.newId();
    const session = new ProcessSession(id, opts.scopeKey, opts.command, opts.cwd, this.limits, opts.reporter);
    this.sessions.set(id, session);
    let argv = opts.argv ?? { file: '/bin/sh', args: ['-c', opts.command] };
    const scope = this.sandboxOf(opts.scopeKey);
    const policy = opts.sandbox === 'host' ? null : scope.policy;
    session.sandbox = sandboxSummary(policy);
    session.sandboxed = policy?.mode === 'on';
    let launch: SandboxLaunch | null = null;
    let budget: DiskBudget | null = null;
    if (policy?.mode === 'on') {
      const where = opts.sandbox && opts.sandbox !== 'host' ? opts.sandbox : { writable: [opts.cwd] };
      try {
        for (const w of where.workdirs ?? []) {
          const why = protectedOverlap(w, scope.protectedDirs ?? []);
          if (why) throw new Error(`workdir ${w} ${why}; name a folder outside them`);
        }
        budget = await this.diskBudgetOf(opts.scopeKey, policy, where.writable);
        launch = await launchSandboxed(
          policy,
          {
            file: argv.file,
            args: argv.args,
            cwd: opts.cwd,
            writable: where.writable,
            readable: where.readable,
            readOnlyInside: scope.readOnlyInside,
            guards: this.guardsOf(opts.scopeKey, policy, where.workdirs ?? [], where.writable),
            pty: opts.pty,
            env: opts.env,
          },
          { onDenied: (d) => session.sandboxDenials.push(`${d.host}:${d.port}`) },
        );
      } catch (e) {
        this.sessions.delete(id);
        throw e;
      }
      argv = { file: launch.file, args: launch.args };
    }
    const ledger = this.ledgers.get(opts.scopeKey);
    // a tracked scope's sessions keep their recent output on disk too: a crash must not take it along
    const output = ledger ? new SessionOutputFile(sessionOutputPath(sessionOutputDirOf(ledger.file), id)) : null;
    const child = await spawnSupervised(
      {
        file: argv.file,
        args: argv.args,
        cwd: opts.cwd,
        // a sandboxed command's environment is set inside; what starts it on the host gets a fixed one
        env: launch ? launch.env : opts.env,
        pty: opts.pty,
        killGraceMs: this.limits.killGraceMs,
        ...(launch?.insideMembers ? { insideMembers: launch.insideMembers } : {}),
      },
      (stream, text) => {
        session.ingest(stream, text);
        output?.append(text);
      },
    );
    const notify = opts.notifyOnExit ?? this.notifyOnExit;
    const emptyToo = opts.notifyOnExitEmptySuccess ?? this.notifyOnExitEmptySuccess;
    if (ledger && child.pid !== undefined) ledger.add({ session_id: id, pid: child.pid, pgid: child.pid, command: opts.command });
    const untrack = budget?.track();
    session.attach(child, opts.timeoutMs ?? 0, (s) => {
      untrack?.();
      void launch?.cleanup();
      ledger?.remove(s.id);
      void output?.remove();
      if (notify && s.backgrounded) this.queueNotice(s, emptyToo);
      this.sweep();
    });
    return session;
  }

  /**
   * Records the process group of each session this scope starts from now on in `file` (removed
   * again when the session ends), so a later Runtrail can end what a SIGKILLed one left running.
   */
  trackScope(scopeKey: string, file: string): void {
    this.ledgers.set(scopeKey, new ProcessLedger(file));
  }

  /** Every session this scope starts from now on runs in this sandbox (a run's policy). */
  sandboxScope(scopeKey: string, sandbox: ScopeSandbox): void {
    this.sandboxes.set(scopeKey, sandbox);
  }

  /**
   * The scope's disk budget over the places its sandboxes write (made at its first sandboxed
   * process, those places' content then the baseline); refuses a new process while the scope is
   * over its cap. Going over ends every session of the scope, each told why.
   */
  private async diskBudgetOf(scopeKey: string, policy: Extract<SandboxPolicy, { mode: 'on' }>, writable: string[]): Promise<DiskBudget> {
    let budget = this.diskBudgets.get(scopeKey);
    if (!budget) {
      budget = new DiskBudget({
        capBytes: diskCapMb(policy.limits) * 1024 * 1024,
        onOver: (message) => {
          for (const s of this.sessions.values()) {
            if (s.scopeKey !== scopeKey || !s.running) continue;
            s.stopReason ??= message;
            void s.end('disk');
          }
        },
      });
      this.diskBudgets.set(scopeKey, budget);
    }
    await budget.watch([...writable, ...policy.write]);
    await budget.admit();
    return budget;
  }

  /**
   * The repository guards of a scope's configured workdirs: each workdir's `.git` as it was the
   * first time the scope used that workdir (before any process of the scope could write there),
   * never looked at again but to check it is still the same.
   */
  private guardsOf(scopeKey: string, policy: Extract<SandboxPolicy, { mode: 'on' }>, workdirs: string[], writable: string[]): RepositoryGuard[] {
    let known = this.repositoryGuards.get(scopeKey);
    if (!known) this.repositoryGuards.set(scopeKey, (known = new Map()));
    const roots = [...writable, ...policy.write];
    for (const w of [...policy.write, ...workdirs]) if (!known.has(w)) known.set(w, guardRepository(w, roots));
    return [...new Set([...policy.write, ...workdirs])].map((w) => known.get(w)).filter((g): g is RepositoryGuard => g != null);
  }

  sandboxOf(scopeKey: string): ScopeSandbox {
    return this.sandboxes.get(scopeKey) ?? { policy: this.defaultSandbox };
  }

  /** The environment a process of this scope starts from: the sandbox's fixed set, or the host's minimal one. */
  baseEnv(scopeKey: string, host = false): Record<string, string> {
    const { policy } = this.sandboxOf(scopeKey);
    return !host && policy.mode === 'on' ? sandboxEnv(policy) : minimalBaseEnv();
  }

  /** A background session of this scope (foreground ones are private to their exec call). */
  get(scopeKey: string, sessionId: string): ProcessSession | undefined {
    const s = this.sessions.get(sessionId);
    return s && s.scopeKey === scopeKey && s.backgrounded ? s : undefined;
  }

  list(scopeKey: string): ProcessSession[] {
    this.sweep();
    return [...this.sessions.values()].filter((s) => s.scopeKey === scopeKey && s.backgrounded);
  }

  /** Keep the session after its exec call returned. */
  markBackgrounded(session: ProcessSession): void {
    session.backgrounded = true;
    if (!session.running) this.queueNoticeIfDue(session);
  }

  /** Drop a session (after a foreground exec has returned its output, or on clear/remove). */
  forget(session: ProcessSession): void {
    this.sessions.delete(session.id);
    const q = this.notices.get(session.scopeKey);
    if (q)
      this.notices.set(
        session.scopeKey,
        q.filter((n) => n.session !== session),
      );
  }

  /**
   * Exit notices for the agent loop's next turn: `Exec completed (<session>, code N) :: <tail>`.
   * Sessions whose exit the model already saw (poll, log, kill) are skipped.
   */
  drainNotices(scopeKey: string): string[] {
    const q = this.notices.get(scopeKey) ?? [];
    this.notices.delete(scopeKey);
    const out: string[] = [];
    for (const { session: s, emptySuccessToo } of q) {
      if (s.exitObserved || s.endCause === 'kill' || s.endCause === 'cancel' || s.endCause === 'shutdown') continue;
      if (s.status === 'completed' && s.totalBytes === 0 && !emptySuccessToo) continue;
      s.exitObserved = true;
      out.push(formatExitNotice(s, this.limits.tailChars));
    }
    return out;
  }

  /** Run cancel: ends every session of the scope (TERM, grace, KILL) and forgets them. */
  async killScope(scopeKey: string): Promise<void> {
    const mine = [...this.sessions.values()].filter((s) => s.scopeKey === scopeKey);
    await Promise.all(mine.map((s) => s.end('cancel')));
    for (const s of mine) this.forget(s);
    this.notices.delete(scopeKey);
    this.ledgers.delete(scopeKey);
    this.sandboxes.delete(scopeKey);
    this.repositoryGuards.delete(scopeKey);
    this.diskBudgets.get(scopeKey)?.stop();
    this.diskBudgets.delete(scopeKey);
  }

  /** Server shutdown: ends everything; the registry refuses new sessions afterwards. */
  async shutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => s.end('shutdown')));
    this.sessions.clear();
    this.notices.clear();
  }

  /** Count of live children, for health checks and tests. */
  get runningCount(): number {
    return [...this.sessions.values()].filter((s) => s.running).length;
  }

  /** Drops finished background sessions past the TTL, then the oldest beyond the cap. */
  sweep(now = Date.now()): void {
    const finished = [...this.sessions.values()].filter((s) => !s.running && s.backgrounded);
    for (const s of finished) if (s.endedAt !== null && now - s.endedAt > this.limits.jobTtlMs) this.forget(s);
    const left = finished.filter((s) => this.sessions.has(s.id)).sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const excess = left.length - this.limits.maxFinishedSessions;
    for (let i = 0; i < excess; i++) this.forget(left[i]);
  }

  private queueNoticeIfDue(s: ProcessSession): void {
    if (this.notifyOnExit) this.queueNotice(s, this.notifyOnExitEmptySuccess);
  }

  private queueNotice(s: ProcessSession, emptySuccessToo: boolean): void {
    const q = this.notices.get(s.scopeKey) ?? [];
    if (q.some((n) => n.session === s)) return;
    q.push({ session: s, emptySuccessToo });
    this.notices.set(s.scopeKey, q);
  }

  private newId(): string {
    for (;;) {
      const id = `exec_${randomBytes(4).toString('hex')}`;
      if (!this.sessions.has(id)) return id;
    }
  }
}

export function formatExitNotice(s: ProcessSession, tailChars: number): string {
  const how = s.timedOut
    ? `timed out, signal ${s.signal ?? 'none'}`
    : s.exitCode !== null
      ? `code ${s.exitCode}`
      : s.spawnError
        ? `failed to start: ${s.spawnError}`
        : `signal ${s.signal ?? 'unknown'}`;
  const tail = s.tail(tailChars).trim();
  return tail ? `Exec completed (${s.id}, ${how}) :: ${tail}` : `Exec completed (${s.id}, ${how})`;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
