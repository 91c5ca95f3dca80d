/**
 * Whether this machine can start the sandbox (bubblewrap installed, the launcher built, a sandbox user
 * when the server is root, user namespaces allowed for it), checked once by starting a real one
 * through the launcher; when it cannot, the diagnosis names what to install or enable.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { DEFAULT_BWRAP } from './bwrap-command.js';
import { LAUNCH_ENV, launcherBuilt, launcherPath, writeLaunchArgs } from './sandbox-launcher.js';
import { sandboxIdentity } from './sandbox-user.js';

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

const ENSURE = 'node scripts/ensure-sandbox-launcher.mjs (npm start and npm test run it)';

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
    const launcher = launcherPath();
    const identity = sandboxIdentity({ refresh: opts.refresh });
    let installed = true;
    try {
      accessSync(bwrap, constants.X_OK);
    } catch {
      installed = false;
    }
    if (!installed)
      result = {
        ok: false,
        bwrap,
        reason: `bubblewrap is not installed (no ${bwrap})`,
        fix: "install Debian's bubblewrap: sudo apt-get install bubblewrap (npm start does it where it may)",
      };
    else if (!launcherBuilt(launcher))
      result = {
        ok: false,
        bwrap,
        reason: `the sandbox launcher is not built (no ${launcher})`,
        fix: `build it against Debian's libseccomp-dev: ${ENSURE}, or set RUNTRAIL_SANDBOX_LAUNCHER to its path`,
      };
    else if (identity.switching && identity.uid === null)
      result = {
        ok: false,
        bwrap,
        reason: `the server runs as root and there is no user ${identity.user} for sandboxed commands to run as (they must not run as root)`,
        fix: `create it: ${ENSURE}, or useradd --system --user-group --no-create-home --shell /usr/sbin/nologin ${identity.user}; RUNTRAIL_SANDBOX_USER names another unprivileged user`,
      };
    else {
      const who = identity.switching ? [String(identity.uid), String(identity.gid)] : ['-', '-'];
      const argsFile = writeLaunchArgs([
        '--unshare-user',
        '--disable-userns',
        '--unshare-pid',
        '--unshare-net',
        '--die-with-parent',
        '--ro-bind',
        '/',
        '/',
        '--proc',
        '/proc',
      ]);
      const r = spawnSync(launcher, [...who, argsFile, bwrap, 'true'], { encoding: 'utf8', timeout: 10_000, env: { ...LAUNCH_ENV } });
      rmSync(argsFile, { force: true });
      result =
        r.status === 0
          ? { ok: true, bwrap }
          : {
              ok: false,
              bwrap,
              reason: `bubblewrap could not make a sandbox${identity.switching ? ` as ${identity.user}` : ''}: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
              fix: userNamespaceFix(),
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
