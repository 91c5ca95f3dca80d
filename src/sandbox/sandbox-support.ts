/**
 * Whether this machine can start the sandbox (bubblewrap installed, user namespaces allowed), checked
 * once by starting a real one; when it cannot, the diagnosis names what to install or enable.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { DEFAULT_BWRAP } from './bwrap-command.js';

export type SandboxSupport = { ok: true; bwrap: string } | { ok: false; bwrap: string; reason: string; fix: string };

const cached = new Map<string, SandboxSupport>();

export function bwrapPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.RUNTRAIL_BWRAP || DEFAULT_BWRAP;
}

function readSysctl(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Why a user namespace could not be made, in terms an operator can act on. */
function userNamespaceFix(): string {
  if (readSysctl('/proc/sys/kernel/unprivileged_userns_clone') === '0') return 'enable user namespaces: sysctl -w kernel.unprivileged_userns_clone=1';
  if (readSysctl('/proc/sys/user/max_user_namespaces') === '0') return 'enable user namespaces: sysctl -w user.max_user_namespaces=15000';
  if (readSysctl('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1')
    return 'allow bwrap user namespaces under AppArmor (an apparmor profile for /usr/bin/bwrap with "userns,"), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0';
  return 'allow user namespaces for this user (in a container: run it with user namespaces permitted, e.g. without a seccomp profile that blocks unshare/clone)';
}

/** Starts `true` in a minimal sandbox once per process and bwrap path (a few ms) and remembers the answer. */
export function sandboxSupport(opts: { refresh?: boolean; bwrap?: string } = {}): SandboxSupport {
  const bwrap = opts.bwrap ?? bwrapPath();
  const known = cached.get(bwrap);
  if (known && !opts.refresh) return known;
  let result: SandboxSupport;
  if (process.platform !== 'linux') {
    result = {
      ok: false,
      bwrap,
      reason: `the sandbox is built on Linux namespaces and this is ${process.platform}`,
      fix: 'run Runtrail on Linux, or set sandbox: { "mode": "off" } in config.json to run commands unsandboxed',
    };
  } else {
    try {
      accessSync(bwrap, constants.X_OK);
      const r = spawnSync(bwrap, ['--unshare-user', '--unshare-pid', '--unshare-net', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', 'true'], {
        encoding: 'utf8',
        timeout: 10_000,
      });
      result =
        r.status === 0
          ? { ok: true, bwrap }
          : {
              ok: false,
              bwrap,
              reason: `bubblewrap could not make a sandbox: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
              fix: userNamespaceFix(),
            };
    } catch {
      result = {
        ok: false,
        bwrap,
        reason: `bubblewrap is not installed (no ${bwrap})`,
        fix: "install Debian's bubblewrap: sudo apt-get install bubblewrap (npm start does it where it may)",
      };
    }
  }
  cached.set(bwrap, result);
  return result;
}

/** One line for an error or the start banner. */
export function describeUnsupported(s: Extract<SandboxSupport, { ok: false }>): string {
  return `the sandbox cannot start: ${s.reason}. To fix: ${s.fix}. (Running unsandboxed needs the operator's sandbox: { "mode": "off" } in config.json.)`;
}
