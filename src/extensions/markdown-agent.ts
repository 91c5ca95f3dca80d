/**
 * A Markdown agent file: YAML frontmatter (validated against AGENT_FRONTMATTER_SCHEMA with ajv) and a
 * body that is the agent's own instructions. Parsing checks the file alone; tools, skills and agents
 * it names are checked by the registry, which knows what exists.
 */
import { didYouMean } from '../events/did-you-mean.js';
import { basename, dirname, extname, isAbsolute } from 'node:path';
import { parseFrontmatter } from '../skills/frontmatter.js';
import { checkSchema, compileJsonSchema, formatSchemaPath, type JsonSchema } from '../tools/schema.js';
import type { ArtifactContract, PlanStep } from '../runtime/agent.js';
import type { RunLimits } from '../runtime/run-service-types.js';
import type { CaptureSettings } from '../runtime/model-calls/capture-settings.js';
import type { AgentSandboxSettings } from '../sandbox/sandbox-policy.js';
import { AGENT_FRONTMATTER_SCHEMA, type ARTIFACT_TYPES } from './agent-frontmatter-schema.js';
import type { DefinitionProblem } from './definition-problem.js';
import { globMatcher, isMcpToolEntry } from '../mcp/mcp-tool-name.js';

export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
export type ReasoningLevel = 'off' | 'low' | 'medium' | 'high';
export type Permission = 'allow' | 'ask' | 'deny';

export interface AgentDefinition {
  name: string;
  description: string;
  version: string;
  model?: string;
  reasoning?: ReasoningLevel;
  goal?: string;
  /** The allowlist; default read_file, write_artifact, list_artifacts. */
  tools: string[];
  skills: string[];
  /** Agents it may start with run_agent. */
  agents: string[];
  /** MCP servers: names from mcp.json, or inline definitions keyed by name. */
  mcpServers: Array<string | Record<string, unknown>>;
  permissions?: Record<string, Permission>;
  durability?: 'resume' | 'interrupt';
  input: JsonSchema;
  artifacts: ArtifactContract[];
  plan?: PlanStep[];
  limits?: Partial<RunLimits> & { context_tokens?: number; approval_timeout_s?: number };
  /** What runs of this agent record of their model calls. */
  capture?: CaptureSettings;
  sandbox?: AgentSandboxSettings;
  /** `schedule:` as written: when the agent runs by itself (checked by src/triggers, which knows schedules) */
  schedule?: Record<string, unknown>;
  instructions: string;
  /** Absolute path of the file; `dir` its folder (relative script: models resolve there). */
  file: string;
  dir: string;
}

export const DEFAULT_AGENT_TOOLS = ['read_file', 'write_artifact', 'list_artifacts'];

/** The tools and skills a file names, read even when the file has other errors: `validate` reports
 *  every problem of a file in one pass, unknown names included. */
export interface AgentReferences {
  name: string | null;
  tools: string[];
  skills: string[];
  /** the MCP servers it names from mcp.json (inline definitions are checked once the file is valid) */
  mcpServers?: string[];
}

export type ParsedAgent =
  | { ok: true; agent: AgentDefinition; warnings: DefinitionProblem[] }
  | { ok: false; problems: DefinitionProblem[]; references?: AgentReferences };

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function referencesOf(data: Record<string, unknown>): AgentReferences {
  return {
    name: typeof data.name === 'string' ? data.name : null,
    tools: strings(data.tools),
    skills: strings(data.skills),
    mcpServers: strings(data.mcpServers),
  };
}

interface RawArtifact {
  path: string;
  type?: ArtifactType;
  required?: boolean;
  headings?: string[];
  description?: string;
  schema?: JsonSchema;
  audience?: ArtifactContract['audience'];
  sensitivity?: ArtifactContract['sensitivity'];
}

interface RawPlanStep {
  id: string;
  title: string;
  tools?: string[];
  done_when_tools_succeeded?: string[];
  done_when_artifacts_exist?: string[];
}

function typeFromPath(p: string): ArtifactType {
  const ext = extname(p).toLowerCase();
  return ext === '.md' || ext === '.markdown' ? 'markdown' : ext === '.json' ? 'json' : ext === '.csv' ? 'csv' : 'text';
}

/** Why an artifact path would leave artifacts/, or null when it stays inside. */
export function artifactPathProblem(p: string): string | null {
  if (p.includes('\0')) return 'must not contain a NUL byte';
  if (isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p)) return 'must be relative to artifacts/, not absolute';
  const parts = p.replace(/^artifacts[\\/]/, '').split(/[\\/]+/);
  if (parts.includes('..')) return 'must stay inside artifacts/ (no "..")';
  if (parts.every((x) => x === '' || x === '.')) return 'must name a file';
  return null;
}

/** `display` is the file as the user knows it (`.runtrail/agents/x.md`), used in every problem. */
export function parseAgentFile(file: string, text: string, display: string): ParsedAgent {
  const problems: DefinitionProblem[] = [];
  const warnings: DefinitionProblem[] = [];
  const err = (field: string | undefined, message: string) => problems.push({ file: display, ...(field ? { field } : {}), message, level: 'error' });
  const fm = parseFrontmatter(text);
  if (!fm.ok) return { ok: false, problems: [{ file: display, message: fm.message, level: 'error' }] };
  if (!fm.hasFrontmatter)
    return {
      ok: false,
      problems: [
        { file: display, message: 'an agent file starts with YAML frontmatter between two "---" lines (at least name and description)', level: 'error' },
      ],
    };
  const checked = checkSchema<Record<string, unknown>>(AGENT_FRONTMATTER_SCHEMA, fm.data);
  if (!checked.ok) {
    const known = Object.keys((AGENT_FRONTMATTER_SCHEMA.properties ?? {}) as Record<string, unknown>);
    for (const i of checked.issues) {
      // a misspelt top-level field gets the field it most likely meant
      const hint = i.path.length === 1 && i.message === 'is not a known field' ? didYouMean(String(i.path[0]), known) : '';
      err(i.path.length ? formatSchemaPath(i.path) : undefined, `${i.message}${hint}`);
    }
    const data = fm.data && typeof fm.data === 'object' ? (fm.data as Record<string, unknown>) : {};
    return { ok: false, problems, references: referencesOf(data) };
  }
  const d = checked.value;
  const stem = basename(file).replace(/\.md$/i, '');
  if (d.name !== stem) err('name', `must equal the file name "${stem}", got "${String(d.name)}"`);

  const input = (d.input as JsonSchema | undefined) ?? { type: 'object' };
  if (input.type !== undefined && input.type !== 'object') err('input.type', `the run input is an object: must be "object", got ${JSON.stringify(input.type)}`);
  const compiledInput = compileJsonSchema(input);
  if (!compiledInput.ok) err('input', compiledInput.message);

  const artifacts: ArtifactContract[] = [];
  const seen = new Set<string>();
  ((d.artifacts as RawArtifact[] | undefined) ?? []).forEach((a, i) => {
    const at = `artifacts[${i}]`;
    const bad = artifactPathProblem(a.path);
    if (bad) return err(`${at}.path`, `${bad}, got ${JSON.stringify(a.path)}`);
    const path = a.path.replace(/^artifacts[\\/]/, '').replace(/\\/g, '/');
    if (seen.has(path)) return err(`${at}.path`, `${path} is declared twice`);
    seen.add(path);
    const type = a.type ?? typeFromPath(path);
    if (a.schema !== undefined) {
      if (type !== 'json') err(`${at}.schema`, `only a json artifact has a schema (this one is ${type})`);
      const c = compileJsonSchema(a.schema);
      if (!c.ok) err(`${at}.schema`, c.message);
    }
    if (a.headings?.length && type !== 'markdown') err(`${at}.headings`, `only a markdown artifact has headings (this one is ${type})`);
    artifacts.push({
      path,
      type,
      required: a.required ?? true,
      audience: a.audience ?? 'user',
      sensitivity: a.sensitivity ?? 'internal',
      description: a.description ?? `${path} (${type})`,
      ...(a.schema ? { schema: a.schema } : {}),
      ...(a.headings?.length ? { requiredHeadings: a.headings } : {}),
    });
  });

  const tools = (d.tools as string[] | undefined) ?? DEFAULT_AGENT_TOOLS;
  const plan = (d.plan as RawPlanStep[] | undefined)?.map((s) => ({
    id: s.id,
    title: s.title,
    tools: s.tools ?? [],
    ...(s.done_when_tools_succeeded ? { doneWhenToolsSucceeded: s.done_when_tools_succeeded } : {}),
    ...(s.done_when_artifacts_exist ? { doneWhenArtifactsExist: s.done_when_artifacts_exist } : {}),
  }));
  // a plan step may name an MCP tool that an `mcp__server__*` entry grants
  const mcpGranted = globMatcher(tools.filter(isMcpToolEntry));
  plan?.forEach((s, i) => {
    for (const t of [...s.tools, ...(s.doneWhenToolsSucceeded ?? [])])
      if (!tools.includes(t) && !mcpGranted(t)) err(`plan[${i}].tools`, `"${t}" is not in the agent's tools (${tools.join(', ')})`);
    for (const p of s.doneWhenArtifactsExist ?? [])
      if (!seen.has(p.replace(/^artifacts\//, '')))
        warnings.push({ file: display, field: `plan[${i}].done_when_artifacts_exist`, message: `${p} is not a declared artifact`, level: 'warning' });
  });
  const ids = plan?.map((s) => s.id) ?? [];
  if (new Set(ids).size !== ids.length) err('plan', 'step ids must be unique');
  if (fm.body.trim() === '') warnings.push({ file: display, message: "the body (the agent's instructions) is empty", level: 'warning' });
  if (problems.length) return { ok: false, problems, references: { name: d.name as string, tools, skills: (d.skills as string[] | undefined) ?? [] } };

  return {
    ok: true,
    warnings,
    agent: {
      name: d.name as string,
      description: d.description as string,
      version: (d.version as string | undefined) ?? '0.0.0',
      ...(d.model ? { model: d.model as string } : {}),
      ...(d.reasoning ? { reasoning: d.reasoning as ReasoningLevel } : {}),
      ...(d.goal ? { goal: d.goal as string } : {}),
      tools,
      skills: (d.skills as string[] | undefined) ?? [],
      agents: (d.agents as string[] | undefined) ?? [],
      mcpServers: (d.mcpServers as AgentDefinition['mcpServers'] | undefined) ?? [],
      ...(d.permissions ? { permissions: d.permissions as Record<string, Permission> } : {}),
      ...(d.durability ? { durability: d.durability as 'resume' | 'interrupt' } : {}),
      input,
      artifacts,
      ...(plan ? { plan } : {}),
      ...(d.limits ? { limits: d.limits as AgentDefinition['limits'] } : {}),
      ...(d.capture ? { capture: d.capture as CaptureSettings } : {}),
      ...(d.sandbox ? { sandbox: d.sandbox as AgentSandboxSettings } : {}),
      ...(d.schedule ? { schedule: d.schedule as Record<string, unknown> } : {}),
      instructions: fm.body.trim(),
      file,
      dir: dirname(file),
    },
  };
}

/** Input keys the agent's schema marks `format: file`: paths copied into input/ at creation. */
export function fileInputsOf(input: JsonSchema): string[] {
  const props = (input.properties ?? {}) as Record<string, { format?: unknown }>;
  return Object.entries(props)
    .filter(([, v]) => v && typeof v === 'object' && v.format === 'file')
    .map(([k]) => k);
}

/** Default plan: one step per required artifact, done when it exists. */
export function defaultPlan(artifacts: ArtifactContract[], tools: string[]): PlanStep[] {
  const writer = tools.includes('write_artifact') ? ['write_artifact'] : [];
  return artifacts
    .filter((a) => a.required)
    .map((a) => ({ id: `write-${a.path.replace(/[^A-Za-z0-9_.-]+/g, '-')}`, title: `Write ${a.path}`, tools: writer, doneWhenArtifactsExist: [a.path] }));
}
