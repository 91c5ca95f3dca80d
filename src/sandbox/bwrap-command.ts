/**
 * The bubblewrap command line of one sandboxed process: a fresh mount namespace that holds only the
 * system folders (read-only, secrets masked), the run's writable roots and what the policy lists; a
 * private /tmp and home; own pid, ipc, uts and (unless the host network is granted) net namespaces;
 * no capabilities, no further user namespaces, the kernel's settings read-only; the sandbox dies with
 * the process that started it. The run's own folders are opened by the launcher (`--launch-bind`,
 * sandbox-launcher.ts), which may reach them when the sandbox's user may not.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import { diskCapMb } from './sandbox-limits.js';
import { guardArgs, type RepositoryGuard } from './git-guard.js';
import { PinnedPathMovedError } from './sandbox-paths.js';
import type { SandboxPolicy } from './sandbox-policy.js';
import { PROXY_SOCKET_INSIDE } from './network-proxy.js';

export const DEFAULT_BWRAP = '/usr/bin/bwrap';
/** HOME inside: on the private /tmp, gone with the sandbox. */
export const SANDBOX_HOME = '/tmp/home';
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** System folders seen read-only (a top-level symlink such as /bin → usr/bin is recreated as one). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
/** Files and folders of /etc that hold secrets: masked even though /etc is visible. */
const ETC_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/security/opasswd',
];
export interface SandboxedSpawn {
  /** The command to run inside. */
  file: string;
  args: string[];
  cwd: string;
  /** Read-write inside (the run's workspace, an operator-named workdir). Absolute. */
  writable: string[];
  /** More read-only paths (a compute skill's folder). Absolute. */
  readable?: string[];
  /** Paths inside the writable roots that stay read-only (the run's own record). */
  readOnlyInside?: string[];
  /** The operator's repositories in the configured workdirs, decided when the run started: read-only. */
  guards?: RepositoryGuard[];
  /** A pty session keeps its terminal as controlling tty (no new session). */
  pty?: boolean;
  /** The proxy's unix socket, bound in at PROXY_SOCKET_INSIDE, when the policy allows named hosts. */
  proxySocket?: string;
  /** The command's environment, set inside only (default: sandboxEnv of the policy). */
  env?: Record<string, string>;
  bwrap?: string;
}

function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** `p` resolved, when it exists and is itself no symlink (the folders above it are Runtrail's). */
function ownPath(p: string): string | null {
  try {
    return lstatSync(p).isSymbolicLink() ? null : realpathSync(p);
  } catch {
    return null;
  }
}

/** A pinned path as it is now: null when it is gone, refused when it resolves elsewhere than pinned. */
function pinned(p: string, kind: 'read' | 'write'): string | null {
  if (!isAbsolute(p)) throw new PinnedPathMovedError(`sandbox ${kind} path ${JSON.stringify(p)} is not absolute: paths are pinned before a run starts`);
  const r = real(p);
  if (r !== null && r !== p)
    throw new PinnedPathMovedError(`sandbox ${kind} path ${p} now resolves to ${r}; the sandbox binds only what was pinned when the run started`);
  return r;
}

/** The folder node runs from, when it is not under the system folders (nvm, /opt): read-only inside. */
function nodePrefix(): string | null {
  const prefix = dirname(dirname(process.execPath));
  return SYSTEM_DIRS.some((d) => prefix === d || prefix.startsWith(`${d}/`)) || prefix === '/' ? null : prefix;
}

/** bwrap's options (with the launcher's `--launch-bind`/`--launch-ro-bind`), without the command. */
export function bwrapOptions(policy: Extract<SandboxPolicy, { mode: 'on' }>, spec: SandboxedSpawn): string[] {
  const a: string[] = ['--die-with-parent', '--unshare-user', '--disable-userns', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (policy.network.mode !== 'host') a.push('--unshare-net');
  if (!spec.pty) a.push('--new-session');
  a.push('--cap-drop', 'ALL');
  for (const dir of SYSTEM_DIRS) {
    let st;
    try {
      st = lstatSync(dir);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(dir), dir);
    else if (st.isDirectory()) a.push('--ro-bind', dir, dir);
  }
  for (const secret of ETC_SECRETS) {
    let st;
    try {
      st = lstatSync(secret);
    } catch {
      continue;
    }
    if (st.isDirectory()) a.push('--tmpfs', secret, '--remount-ro', secret);
    else a.push('--ro-bind', '/dev/null', secret);
  }
  // the host's resolver file may point into /run (systemd-resolved): give its folder for host network
  if (policy.network.mode === 'host') {
    const resolv = real('/etc/resolv.conf');
    if (resolv && !resolv.startsWith('/etc/')) a.push('--ro-bind', dirname(resolv), dirname(resolv));
  }
  const prefix = nodePrefix();
  if (prefix) a.push('--launch-ro-bind', prefix, prefix);
  a.push('--proc', '/proc');
  // the kernel's settings and triggers: read-only whoever the sandbox's uid is (bwrap covers them only
  // where that uid could write them)
  a.push('--ro-bind', '/proc/sys', '/proc/sys');
  if (existsSync('/proc/sysrq-trigger')) a.push('--ro-bind', '/dev/null', '/proc/sysrq-trigger');
  // the private /tmp is memory: no bigger than the run's disk cap
  const tmpBytes = diskCapMb(policy.limits) * 1024 * 1024;
  a.push('--dev', '/dev', '--size', String(tmpBytes), '--tmpfs', '/tmp', '--dir', SANDBOX_HOME, '--dir', '/var/tmp');

  // the policy's paths were pinned (absolute, symlinks resolved) before the run started: one that
  // resolves elsewhere now was changed by something since, and is refused, never followed
  for (const p of [...policy.read, ...(spec.readable ?? [])]) {
    const r = pinned(p, 'read');
    if (r) a.push('--launch-ro-bind', r, r);
  }
  const writable = [...spec.writable, ...policy.write].map((p) => pinned(p, 'write')).filter((p): p is string => p !== null);
  // a folder before what lies inside it: a later bind of the parent would hide the child's mount
  for (const w of [...new Set(writable)].sort((x, y) => x.split('/').length - y.split('/').length)) a.push('--launch-bind', w, w);
  a.push(...guardArgs(spec.guards ?? []));
  // the run's record: bound onto itself only while it is the file or folder Runtrail made (a run may
  // create one that is not there yet, say as a symlink to a host file, which must not become a bind)
  for (const p of spec.readOnlyInside ?? []) {
    const r = ownPath(p);
    if (r) a.push('--launch-ro-bind', r, r);
  }
  if (spec.proxySocket) a.push('--launch-ro-bind', spec.proxySocket, PROXY_SOCKET_INSIDE);

  // the tmpfs root itself stays read-only: a write outside the listed places fails
  a.push('--remount-ro', '/', '--chdir', real(spec.cwd) ?? spec.cwd);
  return a;
}

/** The environment a sandboxed process starts with: a fixed small set, then what was granted by name. */
export function sandboxEnv(policy: Extract<SandboxPolicy, { mode: 'on' }>, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {
    PATH: SANDBOX_PATH,
    HOME: SANDBOX_HOME,
    TMPDIR: '/tmp',
    LANG: parent.LANG ?? 'C.UTF-8',
    TERM: parent.TERM ?? 'xterm-256color',
  };
  for (const name of policy.env) {
    const v = parent[name];
    if (typeof v === 'string') env[name] = v;
  }
  return env;
}
