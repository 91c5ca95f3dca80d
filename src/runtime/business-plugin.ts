/**
 * What a plugin declares (seed 003): inputs, tools, prompt, plan, artifact contract, validators,
 * and a reference procedure the offline model follows. The runtime owns everything else.
 */
import type { z } from 'zod';
import type { AnyToolDefinition } from '../tools/tool.js';

/** File-system view a plugin's tools get: every path is resolved and confined by the runtime. */
export interface WorkspaceAccess {
  readonly runId: string;
  /** Absolute path of runs/<run_id>. */
  readonly root: string;
  /** Resolve a path for reading (input/, artifacts/ or granted read roots); throws on escape. */
  resolveRead(p: string): string;
  /** Resolve a path for writing (artifacts/ only, unless the capabilities widen it); throws on escape. */
  resolveWrite(p: string): string;
  readText(p: string): Promise<string>;
  writeArtifact(relPath: string, content: string | Uint8Array): Promise<{ path: string; bytes: number }>;
  writeRuntimeJson(name: string, value: unknown): Promise<void>;
  listArtifacts(): Promise<Array<{ path: string; bytes: number }>>;
}

export interface PluginRunContext<Input> {
  runId: string;
  input: Input;
  goal: string;
  workspace: WorkspaceAccess;
  /** Set by the runtime: emits a notice on the bus (e.g. "using csv_profile for 12,000 rows"). */
  notice(text: string): void;
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
  /** JSON artifacts: the schema the content must satisfy. */
  schema?: z.ZodType;
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

export interface BusinessPlugin<Input = Record<string, unknown>> {
  name: string;
  version: string;
  description: string;
  inputSchema: z.ZodType<Input>;
  /** Input keys whose values are file paths; the runtime copies them into input/ at creation. */
  fileInputs: string[];
  defaultSkill: string | null;
  defaultGoal: string;
  promptFragments: string[];
  createTools(ctx: PluginRunContext<Input>): AnyToolDefinition[];
  plan: PlanStep[];
  artifacts: ArtifactContract[];
  validators: StopValidator<Input>[];
  offlineProcedure: OfflineProcedure;
}
