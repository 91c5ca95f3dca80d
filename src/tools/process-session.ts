/** One supervised command: its output buffers, state and operation events. */
import type { OperationReporter } from '../events/operation-reporter-types.js';
import type { ChildExit, OutputStream, SupervisedChild } from './supervised-child.js';
import { StringDecoder } from 'node:string_decoder';
import { constants as osConstants } from 'node:os';
import { ByteTailBuffer } from './byte-tail-buffer.js';
import { serverSecrets } from '../events/secret-masker.js';
import { StreamMasker } from '../events/stream-masker.js';

export type SessionStatus = 'running' | 'completed' | 'failed';
/** Why a session was ended by Runtrail rather than by itself. */
/** Why a session was ended from outside: `disk` is the run's disk cap (see `stopReason`). */
export type EndCause = 'kill' | 'timeout' | 'cancel' | 'shutdown' | 'disk';

/** Caps are applied to UTF-8 bytes, so a kept text never has more characters than the cap. */
export interface SessionLimits {
  maxOutputChars: number;
  pendingMaxOutputChars: number;
  tailChars: number;
}

export interface SessionInfo {
  sessionId: string;
  name: string;
  command: string;
  cwd: string;
  pid: number | undefined;
  status: SessionStatus;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  truncated: boolean;
  startedAt: number;
  endedAt: number | null;
  backgrounded: boolean;
  pty: boolean;
  sandbox: { mode: 'on' | 'off' | 'elevated'; network: string };
}

const REPORT_EVERY_MS = 250;

/** bubblewrap exits 128+N when the command inside was killed by signal N (as a shell reports it). */
function signalOfSandboxExit(exit: ChildExit): NodeJS.Signals | null {
  if (exit.code === null || exit.code <= 128 || exit.code > 128 + 64) return null;
  const n = exit.code - 128;
  const name = Object.entries(osConstants.signals).find(([, v]) => v === n)?.[0];
  return (name as NodeJS.Signals | undefined) ?? null;
}

/** "verb target" for quick scanning in `list`: `npm run build` → `npm build`. */
export function deriveSessionName(command: string): string {
  const words = command
    .trim()
    .split(/\s+/)
    .filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));
  const verb = (words[0] ?? '').split('/').pop() ?? '';
  const target = words.slice(1).find((w) => !w.startsWith('-') && w !== 'run') ?? '';
  const name = target ? `${verb} ${target.split('/').pop()}` : verb;
  return name.length > 48 ? `${name.slice(0, 47)}…` : name;
}

export class ProcessSession {
  readonly name: string;
  readonly startedAt = Date.now();
  endedAt: number | null = null;
  status: SessionStatus = 'running';
  exitCode: number | null = null;
  signal: NodeJS.Signals | null = null;
  spawnError: string | undefined;
  endCause: EndCause | null = null;
  backgrounded = false;
  /** How it was sandboxed: `{ mode, network }` in its events and results. */
  sandbox: { mode: 'on' | 'off' | 'elevated'; network: string } = { mode: 'off', network: 'host' };
  /** Ran under bubblewrap: its failures to start are bubblewrap's lines on stderr. */
  sandboxed = false;
  /** Hosts (host:port) the sandbox's proxy refused to this session. */
  readonly sandboxDenials: string[] = [];
  /** Why the runtime stopped it, in words (the run's disk cap), when it did. */
  stopReason: string | null = null;
  /** Set once the model saw the exit (poll/log): no exit notice needed then. */
  exitObserved = false;
  readonly bytes = { stdout: 0, stderr: 0 };
  /** Bytes of output seen, both streams. */
  totalBytes = 0;
  readonly done: Promise<ProcessSession>;

  private readonly output: ByteTailBuffer;
  private readonly pending: Record<OutputStream, ByteTailBuffer>;
  private decoders: Record<OutputStream, StringDecoder> | null = null;
  /** Polled output is masked as one stream per output: a secret printed across two polls is still masked. */
  private readonly polled: Record<OutputStream, StreamMasker> = { stdout: new StreamMasker(), stderr: new StreamMasker() };
  private readonly listeners = new Set<(stream: OutputStream, text: string) => void>();
  private readonly waiters = new Set<() => void>();
  private child: SupervisedChild | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastReport = 0;
  private settle!: () => void;

  constructor(
    readonly id: string,
    readonly scopeKey: string,
    readonly command: string,
    readonly cwd: string,
    private readonly limits: SessionLimits,
    readonly reporter: OperationReporter | undefined,
  ) {
    this.name = deriveSessionName(command);
    this.output = new ByteTailBuffer(limits.maxOutputChars);
    this.pending = { stdout: new ByteTailBuffer(limits.pendingMaxOutputChars), stderr: new ByteTailBuffer(limits.pendingMaxOutputChars) };
    this.done = new Promise((r) => (this.settle = () => r(this)));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }
  get usesPty(): boolean {
    return this.child?.usesPty ?? false;
  }
  get ptyWarning(): string | undefined {
    return this.child?.ptyWarning;
  }
  get running(): boolean {
    return this.status === 'running';
  }
  get timedOut(): boolean {
    return this.endCause === 'timeout';
  }
  get truncated(): boolean {
    return this.output.truncated;
  }
  /** Bytes cut from the front of the kept output. */
  get outputDroppedBytes(): number {
    return this.output.dropped;
  }
  get stdinOpen(): boolean {
    return this.running && (this.child?.stdinOpen ?? false);
  }

  /** Called by the registry once: wires the child, the timeout and the reporter. */
  attach(child: SupervisedChild, timeoutMs: number, onEnd: (s: ProcessSession) => void): void {
    this.child = child;
    this.reporter?.start(this.command, { sessionId: this.id, pid: child.pid, cwd: this.cwd, pty: child.usesPty, sandbox: this.sandbox });
    if (timeoutMs > 0) {
      this.timer = setTimeout(() => void this.end('timeout'), timeoutMs);
      this.timer.unref();
    }
    void child.exited.then((exit) => this.finish(exit, onEnd));
    // Ended (run cancel, shutdown) while it was still being spawned.
    if (this.endCause) void child.terminate();
  }

  /** Output sink for the child. */
  ingest(stream: OutputStream, chunk: Buffer): void {
    this.bytes[stream] += chunk.length;
    this.totalBytes += chunk.length;
    this.output.append(chunk);
    this.pending[stream].append(chunk);
    if (this.listeners.size) {
      const text = this.decoders![stream].write(chunk);
      if (text) for (const l of this.listeners) l(stream, text);
    }
    if (this.waiters.size) this.wake();
    if (this.reporter) {
      const now = Date.now();
      if (now - this.lastReport >= REPORT_EVERY_MS) {
        this.lastReport = now;
        this.reporter.progress({
          stage: 'running',
          current: this.totalBytes,
          message: `${this.totalBytes} bytes of output`,
          payload: { stdoutBytes: this.bytes.stdout, stderrBytes: this.bytes.stderr },
        });
      }
    }
  }

  /** Decoded output as it arrives (compute-skill runners read their JSON lines here). */
  onOutput(listener: (stream: OutputStream, text: string) => void): () => void {
    this.decoders ??= { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The last `n` characters of output; a secret the cut went through is masked in what is left of it. */
  tail(n = this.limits.tailChars): string {
    const text = this.output.tail(n);
    return this.output.truncated || Buffer.byteLength(text) < this.output.size ? serverSecrets.maskCutFront(text) : text;
  }

  fullOutput(): string {
    const text = this.output.toString();
    return this.output.truncated ? serverSecrets.maskCutFront(text) : text;
  }

  /** Unpolled output since the last drain; `dropped*` count bytes cut to stay within the pending cap. */
  drainPending(): { stdout: string; stderr: string; droppedStdout: number; droppedStderr: number } {
    const out = this.pending.stdout.take();
    const err = this.pending.stderr.take();
    return { stdout: this.masked('stdout', out), stderr: this.masked('stderr', err), droppedStdout: out.dropped, droppedStderr: err.dropped };
  }

  /**
   * A polled piece of one output, masked with what was polled before it; the end of a piece that may
   * begin a secret waits for the next poll, or for the exit. Output cut for the pending cap starts a
   * new stream, its front masked as the cut end of whatever stood there.
   */
  private masked(stream: OutputStream, piece: { text: string; dropped: number }): string {
    if (piece.dropped > 0) this.polled[stream] = new StreamMasker();
    const m = this.polled[stream];
    const text = m.push(piece.dropped > 0 ? serverSecrets.maskCutFront(piece.text) : piece.text);
    return this.running ? text : text + m.end();
  }

  hasPending(): boolean {
    return this.pending.stdout.size > 0 || this.pending.stderr.size > 0;
  }

  write(data: string): boolean {
    return this.running && (this.child?.write(data) ?? false);
  }

  endInput(): void {
    this.child?.endInput();
  }

  /** Resolves on new output, on exit, or after `ms`. */
  waitForActivity(ms: number): Promise<void> {
    if (!this.running || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Ends the group for `cause`; resolves when the session has finished. */
  async end(cause: EndCause): Promise<void> {
    if (!this.running) return;
    this.endCause ??= cause;
    // Without a child yet, attach() sees endCause and terminates it as soon as it exists.
    if (this.child) await this.child.terminate();
    await this.done;
  }

  info(): SessionInfo {
    return {
      sessionId: this.id,
      name: this.name,
      command: this.command,
      cwd: this.cwd,
      pid: this.pid,
      status: this.status,
      exitCode: this.exitCode,
      signal: this.signal,
      timedOut: this.timedOut,
      truncated: this.truncated,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      backgrounded: this.backgrounded,
      pty: this.usesPty,
      sandbox: this.sandbox,
    };
  }

  /**
   * bubblewrap's own failure (the command not found, a bind it could not make) ends with exit 1 and a
   * `bwrap: …` line before anything of the command ran: that is a start failure, as a spawn error is.
   */
  private sandboxStartError(exit: ChildExit): string | undefined {
    if (!this.sandboxed || exit.code !== 1 || this.totalBytes > 4096) return undefined;
    const m = /^bwrap: (.+)$/m.exec(this.fullOutput());
    if (!m || this.fullOutput().trim() !== m[0].trim()) return undefined;
    const exec = /^execvp (.+?): (.+)$/.exec(m[1]);
    return exec ? `${exec[1]}: ${exec[2]}` : `the sandbox could not start: ${m[1]}`;
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  private finish(exit: ChildExit, onEnd: (s: ProcessSession) => void): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.decoders && this.listeners.size) {
      for (const stream of ['stdout', 'stderr'] as const) {
        const rest = this.decoders[stream].end();
        if (rest) for (const l of this.listeners) l(stream, rest);
      }
    }
    const bySignal = this.sandboxed ? signalOfSandboxExit(exit) : null;
    this.exitCode = bySignal ? null : exit.code;
    this.signal = bySignal ?? exit.signal;
    this.spawnError = exit.spawnError ?? this.sandboxStartError(exit);
    this.endedAt = Date.now();
    this.status = exit.code === 0 && !this.endCause && !exit.spawnError ? 'completed' : 'failed';
    this.wake();
    this.listeners.clear();
    const r = this.reporter;
    if (r) {
      const payload = {
        sessionId: this.id,
        exitCode: this.exitCode,
        signal: this.signal,
        timedOut: this.timedOut,
        stdoutBytes: this.bytes.stdout,
        stderrBytes: this.bytes.stderr,
        truncated: this.truncated,
        durationMs: this.endedAt - this.startedAt,
      };
      if (this.endCause === 'timeout') r.fail('timed out', payload);
      else if (this.endCause) r.cancel(`ended by ${this.endCause}`);
      else if (exit.spawnError) r.fail(`could not start: ${exit.spawnError}`, payload);
      else if (this.status === 'completed') r.complete('exit code 0', payload);
      else r.fail(exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`, payload);
    }
    onEnd(this);
    this.settle();
  }
}
