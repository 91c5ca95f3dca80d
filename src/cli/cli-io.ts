/** What the CLI needs from its process, injectable so tests run it in-process. */
import type { Agent } from '../runtime/agent.js';
import type { ProviderResolver } from '../runtime/service/run-service.js';
import type { TerminalStream } from '../channels/terminal-adapter.js';

export interface CliOut extends TerminalStream {
  write(chunk: string): unknown;
}

export interface CliDeps {
  // builtin agents of many input types
  // biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
  agents: Agent<any>[]; // any: each agent validates its own input
  stdout: CliOut;
  stderr: CliOut;
  env: Record<string, string | undefined>;
  cwd: string;
  skillsDir?: string;
  providerResolver?: ProviderResolver;
  /** Asks the person at the terminal; null when there is none (stdin is not a TTY). */
  ask?: (question: string) => Promise<string | null>;
  /** Registers a Ctrl-C handler; returns the unregister function. */
  onInterrupt?: (handler: () => void) => () => void;
  /** `serve`: the server engineer's startServer (kept injectable so the CLI loads without the server). */
  serve?: (opts: ServeOptions) => Promise<{ url: string | null; describe?: string; close(): Promise<void> }>;
  /** Example data for `start`; default <package>/examples/feedback.csv */
  exampleCsv?: string;
}

export interface ServeOptions {
  dataDir: string;
  /** The project whose definitions the server runs (DIR/.runtrail, ~/.runtrail, builtins). */
  projectDir: string;
  host?: string;
  port?: number;
  skillsDir?: string;
  env: Record<string, string | undefined>;
  /** Re-read agents, skills and plugins for the next run when their files change. */
  watch?: boolean;
  /** A broken definition stops the server from starting. */
  strict?: boolean;
  /** Several nodes: take requests (api), run them (worker) or both (all, the default). */
  role?: 'api' | 'worker' | 'all';
  /** Runs at once on this node; default 4. */
  concurrency?: number;
  /** A worker's grace on SIGTERM before it interrupts its runs; default 60 s. */
  drainS?: number;
  /** `runtrail channels run`: the chat channels and the runs they start, without the HTTP server. */
  channelsOnly?: boolean;
}

export const EXIT = { ok: 0, failed: 1, usage: 2, cancelled: 130 } as const;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
