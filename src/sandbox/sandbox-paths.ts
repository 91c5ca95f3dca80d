/**
 * The sandbox's `read`/`write` paths pinned before a run starts: relative ones resolved against the
 * project folder (never the working folder of whoever started the CLI), symlinks resolved once, and
 * each checked against the places no run may reach — Runtrail's own folder (`.runtrail/`, where the
 * operator's config lives), the data dir, and any folder holding them. What the bubblewrap command
 * binds later is exactly these paths; it never resolves a path a run could have changed since.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { resolveSandboxPolicy, type AgentSandboxSettings, type OperatorSandboxSettings, type SandboxPolicy } from './sandbox-policy.js';

export interface PinContext {
  /** Relative paths resolve here. */
  projectDir: string;
  /** Folders no sandbox path may cover or enter (the data dir, `<project>/.runtrail`). */
  protectedDirs: string[];
}

/** A pinned path that resolves elsewhere now (something replaced it with a symlink since the run started). */
export class PinnedPathMovedError extends Error {
  readonly code = 'sandbox_path_moved';
}

/** A path of the policy refused: which list, the value as written, and why in the operator's words. */
export interface RefusedSandboxPath {
  field: string;
  value: string;
  message: string;
}

/** The path with its symlinks resolved; a missing tail is kept as written below the deepest folder that exists. */
function realOrLexical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = resolve(p, '..');
    if (parent === p) return p;
    return join(realOrLexical(parent), p.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
  }
}

function within(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/** Why `path` (resolved) may not be a sandbox path, or null when it may. */
export function protectedOverlap(path: string, protectedDirs: string[]): string | null {
  for (const raw of protectedDirs) {
    const dir = realOrLexical(resolve(raw));
    if (within(path, dir)) return `covers ${dir}, where Runtrail keeps its configuration and runs`;
    if (within(dir, path)) return `lies inside ${dir}, where Runtrail keeps its configuration and runs`;
  }
  return null;
}

/** A path as written, made absolute against the project and its symlinks resolved. */
export function pinPath(p: string, projectDir: string): string {
  return realOrLexical(isAbsolute(p) ? resolve(p) : resolve(projectDir, p));
}

/**
 * The policy with its paths pinned, or the first path refused. `fieldPrefix` names where the lists
 * come from in the user's words (`sandbox` of config.json, or of an agent).
 */
export function pinSandboxPaths(
  policy: SandboxPolicy,
  ctx: PinContext,
  fieldPrefix = 'sandbox',
): { ok: true; policy: SandboxPolicy } | { ok: false; refused: RefusedSandboxPath } {
  if (policy.mode === 'off') return { ok: true, policy };
  const pinned: Record<'read' | 'write', string[]> = { read: [], write: [] };
  for (const kind of ['read', 'write'] as const) {
    for (const [i, value] of policy[kind].entries()) {
      const abs = pinPath(value, ctx.projectDir);
      const why = protectedOverlap(abs, ctx.protectedDirs);
      if (why) return { ok: false, refused: { field: `${fieldPrefix}.${kind}[${i}]`, value, message: `${JSON.stringify(value)} (${abs}) ${why}` } };
      if (!pinned[kind].includes(abs)) pinned[kind].push(abs);
    }
  }
  return { ok: true, policy: { ...policy, read: pinned.read, write: pinned.write } };
}

/** The folders no sandbox path may touch for a project and its data dir. */
export function runtrailDirs(projectDir: string, dataDir: string): string[] {
  return [...new Set([join(resolve(projectDir), '.runtrail'), resolve(dataDir)])];
}

/** The paths of `sandbox:` settings that reach Runtrail's own folders, each named by its field. */
export function sandboxPathProblems(
  settings: { read?: string[]; write?: string[] } | undefined,
  ctx: PinContext,
  fieldPrefix = 'sandbox',
): RefusedSandboxPath[] {
  const out: RefusedSandboxPath[] = [];
  for (const kind of ['read', 'write'] as const) {
    for (const [i, value] of (settings?.[kind] ?? []).entries()) {
      const abs = pinPath(value, ctx.projectDir);
      const why = protectedOverlap(abs, ctx.protectedDirs);
      if (why) out.push({ field: `${fieldPrefix}.${kind}[${i}]`, value, message: `${JSON.stringify(value)} (${abs}) ${why}` });
    }
  }
  return out;
}

/**
 * A run's policy from the operator's settings and the agent's ask, every path pinned; or the first
 * path of either that reaches Runtrail's own folders, named as written and where (`config.json`'s
 * `sandbox.write[0]`, or the agent's).
 */
export function pinnedRunPolicy(
  operator: OperatorSandboxSettings | undefined,
  agent: AgentSandboxSettings | undefined,
  ctx: PinContext & { agentName: string },
): { ok: true; policy: SandboxPolicy } | { ok: false; refused: RefusedSandboxPath } {
  for (const [where, settings] of [
    ['config.json sandbox', operator],
    [`agent ${ctx.agentName} sandbox`, agent],
  ] as const) {
    const refused = sandboxPathProblems(settings, ctx, where)[0];
    if (refused) return { ok: false, refused };
  }
  return pinSandboxPaths(resolveSandboxPolicy(operator, agent), ctx);
}
