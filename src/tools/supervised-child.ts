/**
 * One child in its own process group, through pipes or a pty. `exited` settles only once the
 * leader has exited, what it left in its group has been ended, and its output has been read.
 */
import { spawn } from 'node:child_process';
import { isGroupAlive, signalTree, terminateGroup, terminateTree, type ProcessTree } from './process-group.js';
import { bridgeChild } from './signal-bridge.js';
import { forgetRunSession, markRunSession } from '../sandbox/socket-owner.js';

export type OutputStream = 'stdout' | 'stderr';

export interface SpawnSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  pty?: boolean;
  killGraceMs: number;
  /** For a sandboxed child: the processes inside, which polite signals go to (see ProcessTree). */
  insideMembers?: () => number[];
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the child could not be started at all. */
  spawnError?: string;
}

export interface SupervisedChild {
  readonly pid: number | undefined;
  readonly usesPty: boolean;
  /** Why pty was requested but pipes are used. */
  readonly ptyWarning?: string;
  readonly exited: Promise<ChildExit>;
  readonly stdinOpen: boolean;
  write(data: string): boolean;
  endInput(): void;
  /** TERM the group, KILL after the grace; resolves when the group is gone. */
  terminate(): Promise<void>;
}

type PtyModule = typeof import('@lydell/node-pty');
let ptyModule: Promise<PtyModule | Error> | null = null;
function loadPty(): Promise<PtyModule | Error> {
  // Optional dependency: a missing or broken native build must not break exec.
  ptyModule ??= import('@lydell/node-pty').then(
    (m) => m,
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
  return ptyModule;
}

const SIGNAL_NAMES: Record<number, NodeJS.Signals> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM', 6: 'SIGABRT', 13: 'SIGPIPE' };

export async function spawnSupervised(spec: SpawnSpec, onOutput: (stream: OutputStream, chunk: Buffer) => void): Promise<SupervisedChild> {
  const child = await spawnChild(spec, onOutput);
  // a run's process must not decide for a run: the server knows its session by this mark
  const pid = child.pid;
  if (pid !== undefined) {
    markRunSession(pid);
    void child.exited.then(() => forgetRunSession(pid));
  }
  return child;
}

async function spawnChild(spec: SpawnSpec, onOutput: (stream: OutputStream, chunk: Buffer) => void): Promise<SupervisedChild> {
  if (spec.pty) {
    const mod = await loadPty();
    if (!(mod instanceof Error)) {
      try {
        return spawnPty(mod, spec, onOutput);
      } catch (e) {
        return spawnPipes(spec, onOutput, `pty unavailable (${(e as Error).message}); using pipes`);
      }
    }
    return spawnPipes(spec, onOutput, `pty unavailable (${mod.message}); using pipes`);
  }
  return spawnPipes(spec, onOutput);
}

function bridgeTree(tree: ProcessTree, terminate: () => Promise<void>): () => void {
  return bridgeChild({
    signal: (sig) => signalTree(tree, sig),
    terminate,
    killNow: () => signalTree(tree, 'SIGKILL'),
  });
}

function afterLeaderExit(pgid: number | undefined, graceMs: number): Promise<void> {
  // Background jobs the command left behind would be orphans: end them with the session.
  if (pgid === undefined || !isGroupAlive(pgid)) return Promise.resolve();
  return terminateGroup(pgid, graceMs).then(() => undefined);
}

function spawnPipes(spec: SpawnSpec, onOutput: (stream: OutputStream, chunk: Buffer) => void, ptyWarning?: string): SupervisedChild {
  const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = child.pid;
  let stdinOpen = pid !== undefined;
  let leaderExited = false;
  child.once('exit', () => (leaderExited = true));
  const tree: ProcessTree | undefined =
    pid === undefined ? undefined : { pgid: pid, leaderRunning: () => !leaderExited, ...(spec.insideMembers ? { insideMembers: spec.insideMembers } : {}) };
  let terminating: Promise<void> | null = null;
  const terminate = (): Promise<void> => {
    if (!tree) return Promise.resolve();
    terminating ??= terminateTree(tree, spec.killGraceMs).then(() => undefined);
    return terminating;
  };
  const unbridge = tree ? bridgeTree(tree, terminate) : () => {};

  // Raw Buffers: decoding is deferred to whoever reads the text (most of a flood is never read).
  child.stdout.on('data', (b: Buffer) => onOutput('stdout', b));
  child.stderr.on('data', (b: Buffer) => onOutput('stderr', b));
  child.stdin.on('error', () => {
    stdinOpen = false; // EPIPE when the child stops reading: not our failure
  });

  const exited = new Promise<ChildExit>((resolve) => {
    let exit: ChildExit | null = null;
    let closed = false;
    let groupDone = false;
    const finish = () => {
      if (exit && closed && groupDone) {
        stdinOpen = false;
        unbridge();
        resolve(exit);
      }
    };
    child.on('error', (err) => {
      if (pid !== undefined) return; // errors after a successful spawn also surface as exit/close
      exit = { code: null, signal: null, spawnError: err.message };
      closed = true;
      groupDone = true;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      void afterLeaderExit(pid, spec.killGraceMs).then(() => {
        groupDone = true;
        // A process that escaped the group (setsid) may still hold the pipes: stop waiting for it.
        const t = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          closed = true;
          finish();
        }, 500);
        t.unref();
        if (closed) clearTimeout(t);
        finish();
      });
    });
    child.on('close', () => {
      closed = true;
      finish();
    });
  });

  return {
    pid,
    usesPty: false,
    ptyWarning,
    exited,
    get stdinOpen() {
      return stdinOpen;
    },
    write(data) {
      if (!stdinOpen) return false;
      child.stdin.write(data);
      return true;
    },
    endInput() {
      if (!stdinOpen) return;
      stdinOpen = false;
      child.stdin.end();
    },
    terminate,
  };
}

function spawnPty(mod: PtyModule, spec: SpawnSpec, onOutput: (stream: OutputStream, chunk: Buffer) => void): SupervisedChild {
  const term = mod.spawn(spec.file, spec.args, {
    name: spec.env.TERM ?? 'xterm-256color',
    cols: 120,
    rows: 30,
    cwd: spec.cwd,
    env: spec.env,
  });
  // forkpty makes the child a session (and group) leader: its pid is the group id, once it has
  // called setsid(); a kill that comes before that reaches it through its pid (ProcessTree)
  const pid = term.pid;
  let open = true;
  const tree: ProcessTree = { pgid: pid, leaderRunning: () => open, ...(spec.insideMembers ? { insideMembers: spec.insideMembers } : {}) };
  let terminating: Promise<void> | null = null;
  const terminate = (): Promise<void> => {
    terminating ??= terminateTree(tree, spec.killGraceMs).then(() => undefined);
    return terminating;
  };
  const unbridge = bridgeTree(tree, terminate);
  const dataSub = term.onData((s) => onOutput('stdout', Buffer.from(s, 'utf8')));
  const exited = new Promise<ChildExit>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      open = false;
      const sig = signal ? (SIGNAL_NAMES[signal] ?? null) : null;
      void afterLeaderExit(pid, spec.killGraceMs).then(() => {
        // Let the pty deliver what it still buffers before detaching the listener.
        setTimeout(() => {
          dataSub.dispose();
          unbridge();
          resolve({ code: sig ? null : exitCode, signal: sig });
        }, 20);
      });
    });
  });
  return {
    pid,
    usesPty: true,
    exited,
    get stdinOpen() {
      return open;
    },
    write(data) {
      if (!open) return false;
      term.write(data);
      return true;
    },
    endInput() {
      if (open) term.write('\x04'); // ^D: end of input for the line discipline
    },
    terminate,
  };
}
