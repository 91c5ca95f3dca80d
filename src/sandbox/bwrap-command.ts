/**
 * The bubblewrap command line of one sandboxed process: a fresh mount namespace that holds only the
 * system folders (read-only, secrets masked), the run's writable roots and what the policy lists; a
 * private /tmp and home; own pid, ipc, uts and (unless the host network is granted) net namespaces;
 * no capabilities; the sandbox dies with the process that started it.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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
/** How deep below a writable root repositories are looked for (their hooks and config stay read-only). */
const REPO_SEARCH_DEPTH = 3;
const REPO_SEARCH_DIRS = 200;
const REPO_SEARCH_SKIP = new Set(['node_modules', '.venv', 'venv', '__pycache__', 'dist', 'build', 'target']);

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
  /** Relative `read`/`write` paths of the policy resolve against this (the project). */
  baseDir?: string;
  /** A pty session keeps its terminal as controlling tty (no new session). */
  pty?: boolean;
  /** The proxy's unix socket, bound in at PROXY_SOCKET_INSIDE, when the policy allows named hosts. */
  proxySocket?: string;
  bwrap?: string;
}

function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `.git` folders (and worktree pointer files) at or below `root`, a few levels deep and at most
 * REPO_SEARCH_DIRS folders read (a sandbox starts on every exec: a workspace of thousands of folders
 * must not cost tens of ms; a repository deeper than that is not protected).
 */
function repositoriesUnder(root: string, depth = REPO_SEARCH_DEPTH): string[] {
  const found: string[] = [];
  let budget = REPO_SEARCH_DIRS;
  const walk = (dir: string, left: number) => {
    if (budget-- <= 0) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.name === '.git') found.push(p);
      else if (left > 0 && e.isDirectory() && !REPO_SEARCH_SKIP.has(e.name) && !e.name.startsWith('.')) walk(p, left - 1);
    }
  };
  walk(root, depth);
  return found;
}

/** The read-only binds that keep a repository's hooks and config out of reach of what runs inside. */
function gitProtection(gitPath: string): string[] {
  let st;
  try {
    st = lstatSync(gitPath);
  } catch {
    return [];
  }
  // a worktree's `.git` is a pointer file: the pointer itself must not be redirected
  if (!st.isDirectory()) return ['--ro-bind', gitPath, gitPath];
  const out: string[] = [];
  for (const name of ['hooks', 'config', 'info']) {
    const p = join(gitPath, name);
    if (existsSync(p)) out.push('--ro-bind', p, p);
  }
  // without a hooks folder a command could create one: an empty read-only one stands in its place
  if (!existsSync(join(gitPath, 'hooks'))) out.push('--tmpfs', join(gitPath, 'hooks'), '--remount-ro', join(gitPath, 'hooks'));
  return out;
}

/** The folder node runs from, when it is not under the system folders (nvm, /opt): read-only inside. */
function nodePrefix(): string | null {
  const prefix = dirname(dirname(process.execPath));
  return SYSTEM_DIRS.some((d) => prefix === d || prefix.startsWith(`${d}/`)) || prefix === '/' ? null : prefix;
}

/** bwrap's arguments, then `--` and the command. */
export function bwrapArgs(policy: Extract<SandboxPolicy, { mode: 'on' }>, spec: SandboxedSpawn): string[] {
  const a: string[] = ['--die-with-parent', '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
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
  if (prefix) a.push('--ro-bind', prefix, prefix);
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', SANDBOX_HOME, '--dir', '/var/tmp');

  const base = spec.baseDir ?? process.cwd();
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  for (const p of [...policy.read.map(abs), ...(spec.readable ?? [])]) {
    const r = real(p);
    if (r) a.push('--ro-bind', r, r);
  }
  const writable = [...spec.writable, ...policy.write.map(abs)].map(real).filter((p): p is string => p !== null);
  for (const w of writable) a.push('--bind', w, w);
  for (const w of writable) if (isDir(w)) for (const git of repositoriesUnder(w)) a.push(...gitProtection(git));
  for (const p of spec.readOnlyInside ?? []) if (existsSync(p)) a.push('--ro-bind', p, p);
  if (spec.proxySocket) a.push('--ro-bind', spec.proxySocket, PROXY_SOCKET_INSIDE);

  // the tmpfs root itself stays read-only: a write outside the listed places fails
  a.push('--remount-ro', '/', '--chdir', real(spec.cwd) ?? spec.cwd, '--', spec.file, ...spec.args);
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
