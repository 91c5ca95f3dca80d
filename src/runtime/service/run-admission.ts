/**
 * The checks a run passes before it gets an id: the request's shape, the
 * agent, its input, its file inputs, its skills and its model. Each step throws a RunRequestError
 * naming the field; nothing here writes to disk.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { ModelProvider } from '../../providers/model-provider.js';
import type { OfflineProcedure } from '../../providers/model-turn.js';
import { maskedProvider } from '../../providers/masked-provider.js';
import { parseModelSpec, resolveModelProvider, type ModelSpec } from '../../providers/resolve-model-provider.js';
import { envValue } from '../../providers/provider-env.js';
import { listSkills, loadSkill, type LoadedSkill } from '../../skills/skill-loader.js';
import type { Agent } from '../agent.js';
import { createRunRequestSchema, zodIssues, type ParsedCreateRunRequest } from '../create-run-request.js';
import { MAX_INPUT_DEPTH, tooDeepPath } from '../input-depth.js';
import { offlineUnsupportedProvider } from './offline-unsupported.js';
import { checkPluginInput } from '../plugin-input.js';
import type { AgentSource } from '../agent-registry.js';
import { didYouMean } from '../../events/did-you-mean.js';
import { RunRequestError } from '../run-request-error.js';
import type { RunLimits } from '../run-service-types.js';
import { DEFAULT_LIMITS } from '../loop/agent-loop.js';
import { DEFAULT_APPROVAL_TIMEOUT_S } from '../loop/approvals.js';
import { fail } from '../errors.js';

type RequestedAgent = Agent<Record<string, unknown>>;

export type ProviderResolver = (
  spec: ModelSpec,
  opts: { offlineProcedure: OfflineProcedure; env: Record<string, string | undefined>; cwd: string },
) => ModelProvider;

/** Step 1: the request's shape (and its depth: the run's files are JSON, which cannot nest without bound). */
export function parseRunRequest(raw: unknown, agents: AgentSource): ParsedCreateRunRequest {
  const deep = tooDeepPath(raw, MAX_INPUT_DEPTH);
  if (deep !== null) {
    const message = `nested more than ${MAX_INPUT_DEPTH} levels deep; a run's request may nest at most ${MAX_INPUT_DEPTH} levels`;
    fail('invalid_request', `invalid run request: ${deep}: ${message}`, { issues: [{ path: deep, message }] });
  }
  const parsed = createRunRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = zodIssues(parsed.error);
    fail('invalid_request', `invalid run request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues, validPlugins: agents.names() });
  }
  return parsed.data;
}

/** Step 2: the agent it names (the wire key is `plugin`). */
export function agentOf(req: ParsedCreateRunRequest, agents: AgentSource): RequestedAgent {
  const agent = agents.get(req.plugin) as RequestedAgent | undefined;
  if (!agent) {
    // an agent whose file is there but failed to load is that, not an unknown name
    const why = agents.unavailable?.(req.plugin);
    const message = why
      ? `agent "${req.plugin}" is not available: ${why}`
      : `unknown plugin "${req.plugin}"${didYouMean(req.plugin, agents.names())}; valid plugins: ${agents.names().join(', ')}`;
    fail('unknown_plugin', message, {
      issues: [{ path: 'plugin', message: why ? 'failed to load' : 'unknown plugin' }],
      validPlugins: agents.names(),
    });
  }
  return agent;
}

/** Step 3: the input against the plugin's schema; the checked copy (defaults filled). */
export function checkedInput(agent: RequestedAgent, req: ParsedCreateRunRequest): Record<string, unknown> {
  const r = checkPluginInput(agent, req.input);
  if (!r.ok) {
    const issues = r.issues.map((i) => ({ path: i.path.length ? `input.${i.path.join('.')}` : 'input', message: i.message }));
    fail('invalid_request', `invalid input for ${agent.name}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  return { ...r.value };
}

/** The limits a run gets without asking: the agent's own over config.json's over the defaults. */
export function ownLimits(agent: RequestedAgent, configured: Partial<RunLimits> | undefined): RunLimits {
  return { ...DEFAULT_LIMITS, approval_timeout_s: DEFAULT_APPROVAL_TIMEOUT_S, ...configured, ...agent.limits };
}

/** The limits a request may raise (more of them is more of the operator's money and machine). */
const CONSENTED_LIMITS = ['max_iterations', 'max_tool_calls', 'timeout_s', 'stop_repair_turns', 'approval_timeout_s'] as const;

/**
 * Step 3b, for a request that came over the network: it may lower the agent's limits, and raise them
 * only as far as the operator allows in config.json (`request_limits`). A request above both is refused,
 * naming the limit.
 */
export function checkRequestedLimits(requested: Partial<RunLimits> | undefined, own: RunLimits, allowed: Partial<RunLimits> | undefined): void {
  if (!requested) return;
  for (const key of CONSENTED_LIMITS) {
    const asked = requested[key];
    const mine = own[key];
    if (asked === undefined || mine === undefined || asked <= mine) continue;
    const consent = allowed?.[key];
    if (consent !== undefined && asked <= consent) continue;
    const field = `limits.${key}`;
    const message =
      consent !== undefined
        ? `${asked} is above what the operator allows a request (${consent}, config.json "request_limits")`
        : `${asked} is above the agent's own ${mine}; a request may raise it only as far as the operator allows in config.json ("request_limits": { "${key}": ${asked} })`;
    fail('invalid_request', `${field}: ${message}`, { issues: [{ path: field, message }] });
  }
}

function isUnder(path: string, root: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const rel = relative(real(root), real(path));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** Step 4: file inputs are existing regular files inside the input roots; key → absolute path. */
export function fileInputSources(
  agent: RequestedAgent,
  input: Record<string, unknown>,
  opts: { cwd: string; inputRoots: string[] | 'any' },
): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const key of agent.fileInputs) {
    const v = input[key];
    if (typeof v !== 'string') continue;
    const field = `input.${key}`;
    if (v.includes('\0')) fail('invalid_request', `${field}: path contains a NUL byte`, { issues: [{ path: field, message: 'NUL byte' }] });
    const abs = resolve(opts.cwd, v);
    if (opts.inputRoots !== 'any' && !opts.inputRoots.some((r) => isUnder(abs, r))) {
      fail('input_outside_roots', `${field}: ${v} is outside the input roots (${opts.inputRoots.join(', ')})`, {
        issues: [{ path: field, message: `${v} is outside the input roots (${opts.inputRoots.join(', ')})` }],
        field,
      });
    }
    let isFile = false;
    try {
      isFile = statSync(abs).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) fail('invalid_request', `${field}: file not found or not a regular file: ${v}`, { issues: [{ path: field, message: 'file not found' }] });
    sources[key] = abs;
  }
  return sources;
}

/** Step 4b: each file input the agent can use (an empty CSV is refused here, before any run exists). */
export async function checkInputFiles(agent: RequestedAgent, input: Record<string, unknown>, sources: Record<string, string>): Promise<void> {
  if (!agent.inputFileProblem) return;
  for (const [key, abs] of Object.entries(sources)) {
    const problem = await agent.inputFileProblem(key, abs);
    if (problem === null) continue;
    const field = `input.${key}`;
    const message = `${String(input[key])}: ${problem}`;
    fail('invalid_request', `${field}: ${message}`, { issues: [{ path: field, message }], field });
  }
}

/** Step 5: the run's active skill (the request's, else the plugin's default), whose method joins the prompt. */
export async function activeSkill(agent: RequestedAgent, req: ParsedCreateRunRequest, skillDirs: readonly string[]): Promise<LoadedSkill | null> {
  const name = req.skill ?? agent.defaultSkill;
  if (!name) return null;
  const loaded = await loadSkill(skillDirs, name);
  if (!loaded.ok) {
    const code = req.skill && loaded.code === 'not_found' ? 'invalid_request' : 'incompatible';
    const hint =
      loaded.code === 'not_found'
        ? didYouMean(
            name,
            (await listSkills(skillDirs)).skills.map((s) => s.manifest.name),
          )
        : '';
    const message = `${loaded.message}${hint}`;
    fail(code, message, { issues: [{ path: 'skill', message }] });
  }
  return loaded.skill;
}

/** Step 5b: the Agent Skills the agent is granted (listed in the prompt, read with load_skill). */
export async function grantedSkills(agent: RequestedAgent, skillDirs: readonly string[]): Promise<LoadedSkill[]> {
  const out: LoadedSkill[] = [];
  for (const name of agent.skills ?? []) {
    const loaded = await loadSkill(skillDirs, name);
    if (!loaded.ok)
      fail('incompatible', `agent ${agent.name} needs skill "${name}": ${loaded.message}`, { issues: [{ path: 'skill', message: loaded.message }] });
    out.push(loaded.skill);
  }
  return out;
}

export interface ModelChoice {
  /** What the resolver gets: undefined lets it apply RUNTRAIL_MODEL, then offline. */
  spec: ModelSpec;
  /** Relative `script:` files resolve here: the agent file's folder for an agent's own model. */
  cwd: string;
}

/** The model a run uses: the request's, else the agent's, else RUNTRAIL_MODEL, else config.json's, else offline. */
export function chooseModel(
  agent: RequestedAgent,
  req: ParsedCreateRunRequest,
  opts: { cwd: string; env: Record<string, string | undefined>; defaultModel?: string },
): ModelChoice {
  if (req.model !== undefined && !(typeof req.model === 'string' && !req.model.trim())) return { spec: req.model as ModelSpec, cwd: opts.cwd };
  if (agent.model) return { spec: agent.model, cwd: agent.modelBaseDir ?? opts.cwd };
  if (!envValue(opts.env, 'RUNTRAIL_MODEL') && opts.defaultModel) return { spec: opts.defaultModel, cwd: opts.cwd };
  return { spec: undefined, cwd: opts.cwd };
}

/** Step 6: the provider; the offline model without the agent's reference procedure refuses at the first turn. */
export function providerFor(
  agent: RequestedAgent,
  choice: ModelChoice,
  opts: { env: Record<string, string | undefined>; resolver: ProviderResolver },
): ModelProvider {
  const parsed = parseModelSpec(choice.spec ?? envValue(opts.env, 'RUNTRAIL_MODEL'));
  if (!('error' in parsed) && parsed.provider === 'offline' && typeof agent.offlineProcedure !== 'function') return offlineUnsupportedProvider(agent.name);
  try {
    // what the model is sent has the server's secrets masked
    return maskedProvider(opts.resolver(choice.spec, { offlineProcedure: agent.offlineProcedure as OfflineProcedure, env: opts.env, cwd: choice.cwd }));
  } catch (e) {
    if (e instanceof RunRequestError) throw e;
    fail('incompatible', `model provider not available: ${(e as Error).message}`, { issues: [{ path: 'model', message: (e as Error).message }] });
  }
}

/** The resolver a service uses unless given one: the model spec's provider, or a RunRequestError saying
 *  why it cannot be served (a spec's own base URL is ignored: a request must not send the keys elsewhere). */
export const defaultProviderResolver: ProviderResolver = (spec, opts) => {
  const r = resolveModelProvider(spec, { offlineProcedure: opts.offlineProcedure, env: opts.env, cwd: opts.cwd, allowSpecBaseURL: false });
  if (r.ok) return r.provider;
  const d = r.diagnosis;
  const sentence = (t: string) => (/[.!?]$/.test(t.trim()) ? t.trim() : `${t.trim()}.`);
  const msg = [d.summary, d.detail, d.hint]
    .filter((t): t is string => Boolean(t?.trim()))
    .map(sentence)
    .join(' ');
  throw new RunRequestError(d.code === 'invalid_request' ? 'invalid_request' : 'incompatible', msg, { issues: [{ path: 'model', message: d.summary }] });
};
