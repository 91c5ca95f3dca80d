/**
 * Turns "run this program" into "run it in the sandbox": the limits prelude, then bwrap with the
 * policy's binds and namespaces. What the caller spawns is returned, with the cleanup to run once the
 * process has ended (its cgroups).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { bwrapArgs, type SandboxedSpawn } from './bwrap-command.js';
import { FilteringProxy, PROXY_BRIDGE_SOURCE, PROXY_PORT_INSIDE, PROXY_SOCKET_INSIDE, proxyEnv, type ProxyDenial } from './network-proxy.js';
import { limitEnforcement, limitPrelude, memoryByCgroup, SandboxCgroups } from './sandbox-limits.js';
import type { SandboxPolicy } from './sandbox-policy.js';
import { bwrapPath, describeUnsupported, sandboxSupport } from './sandbox-support.js';

export interface SandboxLaunch {
  file: string;
  args: string[];
  /** Set over the process's environment (the proxy's address when named hosts are open). */
  env: Record<string, string>;
  /** Removes the sandbox's cgroups; safe to call twice. */
  cleanup(): Promise<void>;
  /**
   * The processes running inside, without bubblewrap's own two (the outer one and the namespace's
   * init): polite signals go to these, so a command that traps SIGTERM gets its grace. Null where no
   * pids cgroup lists them (then a signal to bubblewrap ends everything inside at once).
   */
  insideMembers: (() => number[]) | null;
}

/** The pid a process has in its innermost pid namespace (1 for a namespace's init). */
function innermostPid(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('NSpid:'));
    const ids = line?.split(/\s+/).slice(1).filter(Boolean);
    return ids?.length ? Number(ids[ids.length - 1]) : null;
  } catch {
    return null;
  }
}

export class SandboxUnavailableError extends Error {
  readonly code = 'sandbox_unavailable';
}

export async function launchSandboxed(
  policy: Extract<SandboxPolicy, { mode: 'on' }>,
  spec: SandboxedSpawn,
  opts: { onDenied?: (d: ProxyDenial) => void; addressAllowed?: (address: string) => boolean } = {},
): Promise<SandboxLaunch> {
  const support = sandboxSupport();
  if (!support.ok) throw new SandboxUnavailableError(describeUnsupported(support));
  // named hosts: the filtering proxy outside, the bridge inside in front of the command
  const proxy =
    policy.network.mode === 'allow'
      ? await FilteringProxy.start({ allow: policy.network.allow, onDenied: opts.onDenied, addressAllowed: opts.addressAllowed })
      : null;
  if (proxy) {
    spec = {
      ...spec,
      file: process.execPath,
      args: ['-e', PROXY_BRIDGE_SOURCE, PROXY_SOCKET_INSIDE, String(PROXY_PORT_INSIDE), spec.file, ...spec.args],
      proxySocket: proxy.socketPath,
    };
  }
  const bwrap = spec.bwrap ?? bwrapPath();
  const cgroups = new SandboxCgroups(`sandbox-${randomBytes(6).toString('hex')}`);
  let procs: string[];
  try {
    procs = cgroups.create(policy.limits);
  } catch (e) {
    void cgroups.remove();
    await proxy?.close();
    throw new Error(`could not set the sandbox's limits: ${(e as Error).message}`);
  }
  let cleaned: Promise<void> | null = null;
  return {
    file: '/bin/sh',
    args: ['-c', limitPrelude(procs, policy.limits, memoryByCgroup()), 'sandbox', bwrap, ...bwrapArgs(policy, spec)],
    env: proxy ? proxyEnv() : {},
    cleanup: () => (cleaned ??= Promise.all([cgroups.remove(), proxy?.close()]).then(() => undefined)),
    insideMembers: limitEnforcement().processes.startsWith('pids cgroup')
      ? () => {
          // the namespace's init is pid 1 inside; the outer bubblewrap is the tree's leader (skipped by signalTree)
          return cgroups.processes().filter((pid) => innermostPid(pid) !== 1);
        }
      : null,
  };
}
