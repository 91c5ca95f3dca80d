/**
 * The stdio transport for MCP servers, with what the SDK's own lacks for a runtime that must leave
 * no orphans: the server runs in its own process group (a server that forks helpers is ended whole,
 * SIGTERM then SIGKILL after the grace), Runtrail's termination signals reach it, its stderr tail is
 * kept for diagnoses, stdout lines that are not JSON-RPC are reported (not silently skipped), and
 * messages are framed without re-copying the buffer per chunk (a 10 MB result is one line).
 */
import { existsSync, statSync } from 'node:fs';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { JSONRPCMessageSchema, type JSONRPCResultResponse } from '@modelcontextprotocol/sdk/types.js';
import { ByteTailBuffer } from '../tools/byte-tail-buffer.js';
import { spawnSupervised, type ChildExit, type SupervisedChild } from '../tools/supervised-child.js';
import { minimalBaseEnv } from '../tools/exec-config.js';
import { sandboxEnv } from '../sandbox/bwrap-command.js';
import { launchSandboxed } from '../sandbox/sandbox-launch.js';
import type { SandboxPolicy } from '../sandbox/sandbox-policy.js';

/** What a definition's env added over the host's minimal base (the base's PATH, HOME… stay the sandbox's own). */
function definitionEnv(env: Record<string, string>): Record<string, string> {
  const base = minimalBaseEnv();
  return Object.fromEntries(Object.entries(env).filter(([k, v]) => base[k] !== v));
}

export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
const STDERR_TAIL_BYTES = 16 * 1024;

export interface StdioSpawnSpec {
  command: string;
  args: string[];
  /** The complete environment of the server. */
  env: Record<string, string>;
  cwd: string;
  /** Run it in the sandbox: its folder readable, what the policy lists writable, no network unless allowed. */
  sandbox?: SandboxPolicy;
}

export interface StdioTransportOptions {
  killGraceMs: number;
  maxMessageBytes?: number;
  /** The server is running (its pid leads its process group): record it so a SIGKILLed Runtrail's successor can end it. */
  onSpawn?(pid: number): void;
  /** The group is gone. */
  onExit?(exit: ChildExit): void;
}

/** A stdout line that is not a JSON-RPC message (stdout is for protocol messages only). */
export class StdoutNoiseError extends Error {
  constructor(readonly line: string) {
    super(`the server wrote a line on stdout that is not a JSON-RPC message: ${JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line)}`);
    this.name = 'StdoutNoiseError';
  }
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: SupervisedChild | null = null;
  private readonly stderrTail = new ByteTailBuffer(STDERR_TAIL_BYTES);
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;
  private exitInfo: ChildExit | null = null;
  private readonly maxBytes: number;
  private sandboxCleanup: (() => Promise<void>) | null = null;

  constructor(
    private readonly spec: StdioSpawnSpec,
    private readonly opts: StdioTransportOptions,
  ) {
    this.maxBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The server's last stderr output (for diagnoses). */
  stderr(): string {
    return this.stderrTail.toString();
  }

  /** How it ended, once it has. */
  get exit(): ChildExit | null {
    return this.exitInfo;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('GroupStdioTransport already started');
    const { cwd } = this.spec;
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new Error(`its working folder ${cwd} does not exist`);
    let file = this.spec.command;
    let args = this.spec.args;
    let env = this.spec.env;
    let insideMembers: (() => number[]) | undefined;
    const policy = this.spec.sandbox;
    if (policy?.mode === 'on') {
      // inside: the sandbox's fixed set, then only what the definition's env names (never the server's own)
      const inside = { ...sandboxEnv(policy, {}), ...definitionEnv(this.spec.env) };
      const launch = await launchSandboxed(policy, { file, args, cwd, writable: [], readable: [cwd], env: inside });
      this.sandboxCleanup = launch.cleanup;
      ({ file, args, env } = launch);
      insideMembers = launch.insideMembers ?? undefined;
    }
    const child = await spawnSupervised(
      { file, args, cwd, env, killGraceMs: this.opts.killGraceMs, ...(insideMembers ? { insideMembers } : {}) },
      (stream, chunk) => {
        if (stream === 'stderr') this.stderrTail.append(chunk);
        else this.ingest(chunk);
      },
    );
    this.child = child;
    if (child.pid === undefined) {
      const exit = await child.exited;
      this.exitInfo = exit;
      throw new Error(spawnMessage(this.spec.command, exit.spawnError ?? 'it could not be started'));
    }
    this.opts.onSpawn?.(child.pid);
    void child.exited.then((exit) => {
      void this.sandboxCleanup?.();
      this.exitInfo = exit;
      this.opts.onExit?.(exit);
      this.finish();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.child || this.closed || !this.child.stdinOpen) throw new Error('the server is not running (its stdin is closed)');
    this.child.write(serializeMessage(message));
  }

  /** Closes stdin, then SIGTERM to the group and SIGKILL after the grace; resolves when the group is gone. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) {
      this.finish();
      return;
    }
    child.endInput();
    await child.terminate();
    await child.exited;
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.onclose?.();
  }

  private ingest(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      const line = this.pending.length ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      this.line(line);
      start = nl + 1;
      if (this.closed) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxBytes) {
        this.pending = [];
        this.pendingBytes = 0;
        this.onerror?.(new Error(`the server sent a message over ${Math.round(this.maxBytes / 1024 / 1024)} MB; the connection is closed`));
        void this.close();
        return;
      }
      this.pending.push(rest);
    }
  }

  private line(buf: Buffer): void {
    const text = buf.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let msg: JSONRPCMessage;
    try {
      const v = JSON.parse(text) as unknown;
      msg = isResultResponse(v) ? v : JSONRPCMessageSchema.parse(v);
    } catch {
      this.onerror?.(new StdoutNoiseError(text));
      return;
    }
    this.onmessage?.(msg);
  }
}

/**
 * A response to one of our requests, exactly `{ jsonrpc: "2.0", id, result: {…} }` (what the SDK's
 * strict JSONRPCResultResponseSchema accepts): taken as it is, since the request's own result schema
 * checks `result` next. Every other message goes through the SDK's JSONRPCMessageSchema; its zod
 * union was the costliest step of reading a tool result.
 */
function isResultResponse(v: unknown): v is JSONRPCResultResponse {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const m = v as Record<string, unknown>;
  const id = m.id;
  const result = m.result;
  return (
    m.jsonrpc === '2.0' &&
    (typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) &&
    result !== null &&
    typeof result === 'object' &&
    !Array.isArray(result) &&
    Object.keys(m).length === 3
  );
}

function spawnMessage(command: string, err: string): string {
  if (/ENOENT/.test(err)) return `command "${command}" was not found (${err}); check "command" and PATH`;
  if (/EACCES/.test(err)) return `command "${command}" is not executable (${err})`;
  return `command "${command}" could not be started: ${err}`;
}
