/**
 * Turns "run this program" into "run it in the sandbox": the limits prelude, then bwrap with the
 * policy's binds and namespaces. What the caller spawns is returned, with the cleanup to run once the
 * process has ended (its cgroups).
 */
import { randomBytes } from 'node:crypto';
import { bwrapArgs, type SandboxedSpawn } from './bwrap-command.js';
import { limitPrelude, memoryByCgroup, SandboxCgroups } from './sandbox-limits.js';
import type { SandboxPolicy } from './sandbox-policy.js';
import { bwrapPath, describeUnsupported, sandboxSupport } from './sandbox-support.js';

export interface SandboxLaunch {
  file: string;
  args: string[];
  /** Removes the sandbox's cgroups; safe to call twice. */
  cleanup(): Promise<void>;
}

export class SandboxUnavailableError extends Error {
  readonly code = 'sandbox_unavailable';
}

export function launchSandboxed(policy: Extract<SandboxPolicy, { mode: 'on' }>, spec: SandboxedSpawn): SandboxLaunch {
  const support = sandboxSupport();
  if (!support.ok) throw new SandboxUnavailableError(describeUnsupported(support));
  const bwrap = spec.bwrap ?? bwrapPath();
  const cgroups = new SandboxCgroups(`sandbox-${randomBytes(6).toString('hex')}`);
  let procs: string[];
  try {
    procs = cgroups.create(policy.limits);
  } catch (e) {
    void cgroups.remove();
    throw new Error(`could not set the sandbox's limits: ${(e as Error).message}`);
  }
  let cleaned: Promise<void> | null = null;
  return {
    file: '/bin/sh',
    args: ['-c', limitPrelude(procs, policy.limits, memoryByCgroup()), 'sandbox', bwrap, ...bwrapArgs(policy, spec)],
    cleanup: () => (cleaned ??= cgroups.remove()),
  };
}
