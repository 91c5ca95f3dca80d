/**
 * Turns "run this program" into "run it in the sandbox": the limits prelude, then the launcher (the
 * sandbox's user, a fresh keyring, the system-call filter), then bwrap with the policy's binds and
 * namespaces. What the caller spawns is returned — with a fixed environment: the command's own is set
 * inside only — and the cleanup to run once the process has ended (its cgroups).
 */
import { randomBytes } from 'node:crypto';
import { chownSync, readFileSync, rmSync } from 'node:fs';
import { bwrapOptions, sandboxEnv, type SandboxedSpawn } from './bwrap-command.js';
import { FilteringProxy, PROXY_BRIDGE_SOURCE, PROXY_PORT_INSIDE, PROXY_SOCKET_INSIDE, proxyEnv, type ProxyDenial } from './network-proxy.js';
import { limitEnforcement, limitPrelude, memoryByCgroup, SandboxCgroups } from './sandbox-limits.js';
import type { SandboxPolicy } from './sandbox-policy.js';
import { bwrapPath, describeUnsupported, sandboxSupport } from './sandbox-support.js';
import { insideEnvOptions, LAUNCH_ENV, launcherPath, writeLaunchArgs } from './sandbox-launcher.js';
import { handOver, sandboxIdentity, unreadableBy } from './sandbox-user.js';

export interface SandboxLaunch {
  file: string;
  args: string[];
  /** The whole environment to spawn it with: fixed (the command's own is set inside by bwrap). */
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
  const identity = sandboxIdentity();
  if (identity.switching && identity.uid !== null) {
    const owner = { uid: identity.uid, gid: identity.gid };
    // what the run writes is the sandbox user's: the folders the server made for it are handed over
    // (its record too: bound read-only inside, and the run must read its inputs and manifest)
    for (const w of [...spec.writable, ...policy.write]) handOver(w, owner);
    // what it is given to read must be readable by it: said now, not found out by a command failing
    for (const r of spec.readable ?? []) {
      const why = unreadableBy(r, owner);
      if (why) {
        await proxy?.close();
        throw new SandboxUnavailableError(
          `the sandbox's user ${identity.user} cannot read ${r} (${why}): make it readable by others, or by that user or group`,
        );
      }
    }
    // the proxy's socket sits in a folder of the server's alone; connecting needs write on the socket
    if (proxy) chownSync(proxy.socketPath, owner.uid, owner.gid);
  }
  const insideEnv = { ...(spec.env ?? sandboxEnv(policy)), ...(proxy ? proxyEnv() : {}) };
  // the operator's repositories in a workdir stay root's, which the sandbox's user is not: git inside
  // would refuse to read them ("dubious ownership"). Their .git is read-only inside (git-guard.ts), so
  // trusting them runs nothing but what the operator configured, and that inside the sandbox.
  if (identity.switching && insideEnv.GIT_CONFIG_COUNT === undefined)
    Object.assign(insideEnv, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' });
  let argsFile: string;
  try {
    argsFile = writeLaunchArgs([...bwrapOptions(policy, spec), ...insideEnvOptions(insideEnv)]);
  } catch (e) {
    await proxy?.close();
    throw e;
  }
  const who = identity.switching ? [String(identity.uid), String(identity.gid)] : ['-', '-'];
  const cgroups = new SandboxCgroups(`sandbox-${randomBytes(6).toString('hex')}`);
  let procs: string[];
  try {
    procs = cgroups.create(policy.limits);
  } catch (e) {
    void cgroups.remove();
    await proxy?.close();
    rmSync(argsFile, { force: true });
    throw new Error(`could not set the sandbox's limits: ${(e as Error).message}`);
  }
  let cleaned: Promise<void> | null = null;
  return {
    file: '/bin/sh',
    args: ['-c', limitPrelude(procs, policy.limits, memoryByCgroup()), 'sandbox', launcherPath(), ...who, argsFile, bwrap, spec.file, ...spec.args],
    env: { ...LAUNCH_ENV },
    // the launcher removes the options file as it starts; one that never started leaves it to this
    cleanup: () => (cleaned ??= Promise.all([cgroups.remove(), proxy?.close(), rmSync(argsFile, { force: true })]).then(() => undefined)),
    insideMembers: limitEnforcement().processes.startsWith('pids cgroup')
      ? () => {
          // the namespace's init is pid 1 inside; the outer bubblewrap is the tree's leader (skipped by signalTree)
          return cgroups.processes().filter((pid) => innermostPid(pid) !== 1);
        }
      : null,
  };
}
