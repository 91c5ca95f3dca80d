/**
 * What a RunService is made with: its data folder, agents and skills, config.json's defaults, the queue,
 * store and fanout (one process or several nodes), and what its runs' engine is given (hooks, the
 * background-process registry, test hooks).
 */
import type { OperatorSandboxSettings } from '../../sandbox/sandbox-policy.js';
import type { TextFilter } from '../loop/agent-turn.js';
import type { Agent } from '../agent.js';
import type { AgentSource } from '../agent-registry.js';
import type { CaptureSettings } from '../model-calls/capture-settings.js';
import type { EventFanout } from '../storage/event-fanout.js';
import type { ProviderResolver } from './run-admission.js';
import type { NoticeSource } from '../run/run-engine.js';
import type { RunHooks } from '../run-hooks.js';
import type { RunQueue } from './run-queue.js';
import type { DurabilitySettings } from '../recovery/run-resume.js';
import type { RunLimits, RunObserver } from '../run-service-types.js';
import type { RunStore } from '../storage/run-store.js';

/** The project's config.json as a run's defaults see it (read again at each create). */
export interface RunServiceDefaults {
  model?: string;
  limits?: Partial<RunLimits>;
  request_limits?: Partial<RunLimits>;
  capture?: CaptureSettings;
  sandbox?: OperatorSandboxSettings;
  durability?: Partial<DurabilitySettings>;
}

export interface RunServiceOptions {
  /** default RUNTRAIL_DATA_DIR or ./.runtrail */
  dataDir?: string;
  // the registry holds agents of many input types; each validates its own input
  // biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
  agents?: Agent<any>[]; // any: input types differ per agent, checked by agent.inputSchema
  /** Instead of `agents`: a source asked at each create (the extension registry, refreshed by `serve --watch`). */
  agentSource?: AgentSource;
  /** default: the package's skills/ folder */
  skillsDir?: string;
  /** Where skills are looked up, first wins (project, user, builtin); default [skillsDir]. */
  skillDirs?: string[];
  /** The project's config.json, read at each create: `model` when neither the request nor the agent names
   *  one and RUNTRAIL_MODEL is unset; `limits` under the agent's and the request's. */
  defaults?: () => RunServiceDefaults;
  /** `serve` and `worker`: at init, resume every run whose process died and that can be resumed
   *  (the CLI leaves them for `runtrail resume` or `run --resume`). */
  resumeOnStart?: boolean;
  concurrency?: number;
  /** Runs allowed to wait for a slot; past it create() throws queue_full. Default 100. */
  maxQueue?: number;
  /** Where runs wait for a worker; default the in-process queue (concurrency, maxQueue). */
  queue?: RunQueue;
  /** Run records and event logs; default the run folders of the data dir. */
  store?: RunStore;
  /** Live events to readers; default the runs' buses in this process. */
  fanout?: EventFanout;
  /** A shared queue: how often queued runs it lost (Redis flushed or restarted) are looked for; default 10 s. */
  reconcileMs?: number;
  /** Several nodes: whether the worker that claimed a run is gone (its presence file stopped beating).
   *  The reconciler interrupts such runs even when the queue forgot them (Redis flushed). */
  workerGone?: (runId: string) => Promise<boolean>;
  /** A worker that drains on SIGTERM: the signal is not forwarded to its runs' commands, which finish
   *  with their runs (drain() interrupts what is left, and that ends them). */
  drainsOnSignal?: boolean;
  /** The service's log (`serve` prints it): one line per run a stop leaves to be resumed and per run a
   *  start takes up or ends in its place. Default: nothing is logged. */
  log?: (line: string) => void;
  /** Where file inputs may come from: 'any' (the CLI) or folders (server default <dataDir>/uploads). */
  inputRoots?: string[] | 'any';
  env?: Record<string, string | undefined>;
  /** Base for relative file inputs and script paths; default process.cwd(). */
  cwd?: string;
  /** Base of the sandbox's relative read/write paths: the project folder (default: the registry's, else cwd). */
  projectDir?: string;
  /** Throws RunRequestError (or any Error) when the model spec cannot be served. */
  providerResolver?: ProviderResolver;
  hooks?: Partial<RunHooks>;
  /** Background-process registry: exit notices before each model turn, its sessions ended with the run.
   *  Default: the process-wide defaultProcessRegistry(); null for none. */
  processRegistry?: NoticeSource | null;
  createTextFilter?: () => TextFilter;
  /** Tests: replace the provider-retry backoff. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
  /** How long a finishing run waits for its background processes to end; default 10 s. */
  killScopeTimeoutMs?: number;
  /** Told of each run before its first event, with its bus (tracing subscribes here). */
  observers?: RunObserver[];
}
