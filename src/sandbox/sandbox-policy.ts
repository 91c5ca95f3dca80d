/**
 * What a run's processes may touch: the `sandbox:` settings of an agent's frontmatter, narrowed or
 * widened by the operator's `config.json`, resolved into one policy the bubblewrap command is built
 * from. The agent asks; only the operator can turn the sandbox off, give the host network, raise a
 * limit above its default or grant a secret-looking variable.
 */
import { isAbsolute, posix, resolve } from 'node:path';
import { isSecretEnvName } from '../events/secret-masker.js';

/** `network:` as written: no network, the host's, or named hosts through the filtering proxy. */
export type NetworkSetting = 'none' | 'host' | { allow: string[] };

export interface SandboxLimitSettings {
  /** At most this many processes (and threads) at once; default 1,024. */
  processes?: number;
  /** Memory of all its processes together, MiB; default 4,096. */
  memory_mb?: number;
  /** CPU time of each process, seconds; default 3,600. */
  cpu_s?: number;
  /** Largest file a process may write, MiB; default 4,096. */
  file_mb?: number;
  /** What the run's processes may add to the disk all together (workspace, workdirs, write paths; each /tmp), MiB; default 8,192. */
  disk_mb?: number;
}

/** `sandbox:` in an agent's frontmatter. */
export interface AgentSandboxSettings {
  /** More paths visible read-only (absolute, or relative to the project). */
  read?: string[];
  /** More paths writable. */
  write?: string[];
  network?: NetworkSetting;
  /** Names of the server's environment variables handed to its processes. */
  env?: string[];
  limits?: SandboxLimitSettings;
}

/** `sandbox:` in config.json: the agent's settings plus what only the operator decides. */
export interface OperatorSandboxSettings extends AgentSandboxSettings {
  /** "off" runs every process on the host (printed at start, written into each run's resolved_config.json). */
  mode?: 'on' | 'off';
  /** Whether `exec` with `elevated: true` may run on the host: never (default), after an approval, or at once. */
  elevated?: 'off' | 'ask' | 'allow';
}

export interface SandboxLimits {
  processes: number;
  memory_mb: number;
  cpu_s: number;
  file_mb: number;
  disk_mb: number;
}

export type ResolvedNetwork = { mode: 'none' } | { mode: 'host' } | { mode: 'allow'; allow: string[] };

/** The effective policy of one run (or one MCP server). */
export type SandboxPolicy =
  | { mode: 'off' }
  | {
      mode: 'on';
      read: string[];
      write: string[];
      network: ResolvedNetwork;
      /** Variables by name (their values are the server's, read when a process starts). */
      env: string[];
      limits: SandboxLimits;
      /** Whether an `elevated: true` exec may run on the host: never, after a person's approval, or at once (the operator's). */
      elevated: ElevatedMode;
      /** What the operator's settings changed of the agent's ask, in words (resolved_config.json shows it). */
      notes: string[];
    };

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({ processes: 1024, memory_mb: 4096, cpu_s: 3600, file_mb: 4096, disk_mb: 8192 });

export type ElevatedMode = 'off' | 'ask' | 'allow';

function union(a: string[] | undefined, b: string[] | undefined): string[] {
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}

function resolveNetwork(agent: NetworkSetting | undefined, operator: NetworkSetting | undefined, notes: string[]): ResolvedNetwork {
  if (operator === 'none') {
    if (agent && agent !== 'none') notes.push("network: the operator allows none, so the agent's network is not given");
    return { mode: 'none' };
  }
  const operatorAllow = typeof operator === 'object' ? operator.allow : [];
  if (agent === 'host') {
    if (operator === 'host') return { mode: 'host' };
    notes.push('network: host needs the operator\'s sandbox.network: "host" in config.json; not given');
    return operatorAllow.length ? { mode: 'allow', allow: [...operatorAllow] } : { mode: 'none' };
  }
  const allow = union(typeof agent === 'object' ? agent.allow : [], operatorAllow);
  return allow.length ? { mode: 'allow', allow } : { mode: 'none' };
}

function resolveLimits(agent: SandboxLimitSettings | undefined, operator: SandboxLimitSettings | undefined, notes: string[]): SandboxLimits {
  const out = { ...DEFAULT_SANDBOX_LIMITS };
  for (const key of Object.keys(out) as Array<keyof SandboxLimits>) {
    const cap = operator?.[key] ?? DEFAULT_SANDBOX_LIMITS[key];
    const asked = agent?.[key];
    if (asked !== undefined && asked > cap) notes.push(`limits.${key}: the agent asks ${asked}, the operator allows ${cap}`);
    out[key] = asked === undefined ? cap : Math.min(asked, cap);
  }
  return out;
}

/**
 * The paths an agent may list itself: inside the project (relative, not leaving it, not into
 * `.runtrail` where the data dir and the operator's config live) or inside a path the operator
 * listed. Anything else — `/`, `/root`, another run's folder — needs the operator.
 */
function agentPaths(kind: 'read' | 'write', asked: string[] | undefined, operatorPaths: string[], notes: string[]): string[] {
  const ok: string[] = [];
  for (const p of asked ?? []) {
    const norm = posix.normalize(p);
    const insideOperator = operatorPaths.some((o) => isAbsolute(o) && isAbsolute(norm) && (norm === o || norm.startsWith(o.endsWith('/') ? o : `${o}/`)));
    const insideProject = !isAbsolute(norm) && norm !== '..' && !norm.startsWith('../') && norm.split('/')[0] !== '.runtrail';
    if (insideProject || insideOperator) ok.push(p);
    else notes.push(`${kind} ${p}: an agent may list paths inside the project (not .runtrail) or inside the operator's sandbox.${kind}; not given`);
  }
  return ok;
}

/** The agent's ask within the operator's bounds. */
export function resolveSandboxPolicy(operator: OperatorSandboxSettings | undefined, agent: AgentSandboxSettings | undefined): SandboxPolicy {
  if (operator?.mode === 'off') return { mode: 'off' };
  const notes: string[] = [];
  // a variable that looks like a key or token reaches a run's processes only by the operator's grant
  const agentEnv = (agent?.env ?? []).filter((name) => {
    if (!isSecretEnvName(name) || operator?.env?.includes(name)) return true;
    notes.push(`env ${name}: looks like a secret; only the operator's sandbox.env can grant it`);
    return false;
  });
  return {
    mode: 'on',
    read: union(agentPaths('read', agent?.read, [...(operator?.read ?? []), ...(operator?.write ?? [])], notes), operator?.read),
    write: union(agentPaths('write', agent?.write, operator?.write ?? [], notes), operator?.write),
    network: resolveNetwork(agent?.network, operator?.network, notes),
    env: union(agentEnv, operator?.env),
    limits: resolveLimits(agent?.limits, operator?.limits, notes),
    elevated: operator?.elevated ?? 'off',
    notes,
  };
}

/** The policy with its relative `read`/`write` paths resolved against `dir` (the project). */
export function withBaseDir(policy: SandboxPolicy, dir: string): SandboxPolicy {
  if (policy.mode === 'off') return policy;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dir, p));
  return { ...policy, read: policy.read.map(abs), write: policy.write.map(abs) };
}

/** The policy as a step's payload says it: `{ mode, network }`. */
export function sandboxSummary(policy: SandboxPolicy | null): { mode: 'on' | 'off' | 'elevated'; network: string } {
  if (!policy) return { mode: 'elevated', network: 'host' };
  if (policy.mode === 'off') return { mode: 'off', network: 'host' };
  const n = policy.network;
  return { mode: 'on', network: n.mode === 'allow' ? `allow ${n.allow.join(', ')}` : n.mode };
}

/** JSON Schema of `sandbox:` (agent frontmatter; config.json adds mode and elevated). */
const networkSchema = {
  anyOf: [
    { enum: ['none', 'host'] },
    {
      type: 'object',
      additionalProperties: false,
      required: ['allow'],
      properties: { allow: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$' } } },
    },
  ],
};
const pathList = { type: 'array', items: { type: 'string', minLength: 1 } };
const sandboxProperties = {
  read: pathList,
  write: pathList,
  network: networkSchema,
  env: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } },
  limits: {
    type: 'object',
    additionalProperties: false,
    properties: {
      processes: { type: 'integer', minimum: 8, maximum: 1_000_000 },
      memory_mb: { type: 'integer', minimum: 16 },
      cpu_s: { type: 'integer', minimum: 1 },
      file_mb: { type: 'integer', minimum: 1 },
      disk_mb: { type: 'integer', minimum: 1 },
    },
  },
};
export const AGENT_SANDBOX_SCHEMA = { type: 'object', additionalProperties: false, properties: sandboxProperties };
export const OPERATOR_SANDBOX_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { ...sandboxProperties, mode: { enum: ['on', 'off'] }, elevated: { enum: ['off', 'ask', 'allow'] } },
};
