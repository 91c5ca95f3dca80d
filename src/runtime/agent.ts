/**
 * An Agent: what a run is asked to use (the API's `plugin` field names one). It declares its inputs,
 * tools, prompt, plan, artifact contract, validators, and a reference procedure the offline model
 * follows; the runtime owns everything else. Builtins, Markdown agents and code plugins' agents are
 * all this one type.
 */
import type { AnyToolDefinition } from '../tools/tool.js';
import type { ToolSource } from '../tools/tool-source.js';
import type { Schema } from '../tools/schema.js';
import type { ConfinedPath, ReadBounds } from '../tools/confined-files.js';
import type { RunLimits } from './run-limits.js';
import type { CaptureSettings } from './model-calls/capture-settings.js';
import type { AgentSandboxSettings } from '../sandbox/sandbox-policy.js';
import type { LoadedSkill } from '../skills/skill-loader.js';

/** File-system view a plugin's tools get: every path is resolved and confined by the runtime. */
export interface WorkspaceAccess {
  readonly runId: string;
  /** Absolute path of runs/<run_id>. */
  readonly root: string;
  /** Resolve a path for reading (input/, artifacts/ or granted read roots); throws on escape. */
  resolveRead(p: string): string;
  /** Resolve a path for writing (artifacts/ only, unless the capabilities widen it); throws on escape. */
  resolveWrite(p: string): string;
  /** The first bytes of a regular file inside the read roots (never a FIFO, device or a link leading out), and its size. */
  readFile(p: string, bounds?: ReadBounds): Promise<{ data: Buffer; size: number }>;
  readText(p: string): Promise<string>;
  writeArtifact(relPath: string, content: string | Uint8Array): Promise<{ path: string; bytes: number }>;
  /** What writeArtifact would leave on the disk (nothing is written): path under artifacts/, size, SHA-256. */
  artifactDigest?(relPath: string, content: string | Uint8Array): { path: string; bytes: number; sha256: string };
  /** Size and SHA-256 of artifacts/<path> on the disk, or null. */
  artifactOnDisk?(path: string): Promise<{ bytes: number; sha256: string } | null>;
  writeRuntimeJson(name: string, value: unknown): Promise<void>;
  listArtifacts(): Promise<Array<{ path: string; bytes: number }>>;
}

export interface AgentRunContext<Input> {
  runId: string;
  input: Input;
  goal: string;
  workspace: WorkspaceAccess;
  /** Set by the runtime: emits a notice on the bus (e.g. "using csv_profile for 12,000 rows"). */
  notice(text: string): void;
  /** The plugin's granted Agent Skills (`skills`), loaded by the runtime. */
  skills?: LoadedSkill[];
  /** read_file schemes the runtime grants (run://<child_run_id>/artifacts/<path> for subagents' files). */
  schemes?: Record<string, (rest: string) => ConfinedPath>;
}

export interface PlanStep {
  id: string;
  title: string;
  /** tools this step may use */
  tools: string[];
  /** The step is done when every listed tool has succeeded at least once ... */
  doneWhenToolsSucceeded?: string[];
  /** ... and every listed artifact exists (relative to artifacts/). */
  doneWhenArtifactsExist?: string[];
}

export interface ArtifactContract {
  /** relative to artifacts/ */
  path: string;
  type: 'json' | 'markdown' | 'text' | 'csv';
  audience: 'user' | 'operator' | 'internal';
  sensitivity: 'public' | 'internal' | 'confidential';
  description: string;
  required: boolean;
  /** JSON artifacts: the schema the content must satisfy (zod, or JSON Schema checked with ajv). */
  schema?: Schema;
  /** Markdown artifacts: headings (without #) that must appear. */
  requiredHeadings?: string[];
}

export interface ValidationContext<Input> {
  runId: string;
  input: Input;
  workspace: WorkspaceAccess;
}

/** A failed check; `path` names the artifact it concerns when there is one. */
export interface ValidationIssue {
  check: string;
  path?: string;
  message: string;
}

export interface StopValidator<Input> {
  name: string;
  validate(ctx: ValidationContext<Input>): Promise<ValidationIssue[]>;
}

/** The offline model's brain and the turns it plays are the providers' own types (one definition). */
export type { ModelTurn, OfflineProcedure } from '../providers/model-turn.js';
import type { OfflineProcedure } from '../providers/model-turn.js';

/** Where a definition came from: shown by `runtrail agents`, /api/plugins and clash warnings. */
export interface DefinitionSource {
  kind: 'builtin' | 'user' | 'project' | 'package';
  /** The file (or package) it was loaded from; absent for builtins. */
  file?: string;
}

export interface Agent<Input = Record<string, unknown>> {
  name: string;
  version: string;
  description: string;
  /** The run input's schema: zod (the builtins) or JSON Schema (Markdown agents), strict either way. */
  inputSchema: Schema<Input>;
  /** Input keys whose values are file paths; the runtime copies them into input/ at creation. */
  fileInputs: string[];
  /** Checked before the run is created: why this file cannot serve as this input (an empty CSV), or null.
   *  A problem is an input error (exit 2, HTTP 400) naming the file; no run starts. */
  inputFileProblem?(key: string, file: string): Promise<string | null>;
  defaultSkill: string | null;
  defaultGoal: string;
  promptFragments: string[];
  createTools(ctx: AgentRunContext<Input>): AnyToolDefinition[];
  /** Tools known only once connected (an agent's MCP servers): opened before the run's first model turn. */
  createToolSources?(ctx: AgentRunContext<Input>): ToolSource[];
  plan: PlanStep[];
  artifacts: ArtifactContract[];
  validators: StopValidator<Input>[];
  /** The reference procedure the offline model follows; without one the offline model refuses the run
   *  at once (diagnosis `offline_unsupported`) instead of pretending. */
  offlineProcedure?: OfflineProcedure;
  /** The agent's own instructions (a Markdown agent's body): the system prompt's Agent Instructions. */
  instructions?: string;
  /** Agent Skills granted to the run: listed by name and description, read with `load_skill`. */
  skills?: string[];
  /** Model spec used when the request names none (before config.json's and RUNTRAIL_MODEL). */
  model?: string;
  /** Folder a relative `script:<file>` model of the definition resolves against. */
  modelBaseDir?: string;
  /** Limits of the definition, between config.json's and the request's. */
  limits?: Partial<RunLimits>;
  /** What its runs record of their model calls (`capture: { model_io: false }` turns the record off). */
  capture?: CaptureSettings;
  /** What its processes may touch (`sandbox:` in an agent's frontmatter), within the operator's bounds. */
  sandbox?: AgentSandboxSettings;
  /** allow | ask | deny per tool name, glob or `*`: `ask` waits for a person's decision. */
  permissions?: Record<string, 'allow' | 'ask' | 'deny'>;
  /** Agents it may start as subagents with the `run_agent` tool. */
  agents?: string[];
  /** After its process dies, a run resumes from its checkpoint (`resume`, the default) or ends
   *  `interrupted` (`interrupt`: it keeps no checkpoint). */
  durability?: 'resume' | 'interrupt';
  source?: DefinitionSource;
}
