/**
 * Who a sandbox's processes are on the host. A server running as root must not lend root to a run
 * (uid 0 still owns /proc/sys, the kernel's helpers and everything root-owned that is not masked), so
 * there the sandbox runs as an unprivileged system user the install creates (`runtrail-sandbox`, or
 * the one RUNTRAIL_SANDBOX_USER names), and the folders a run writes are handed to that user. An
 * ordinary server user needs none of this: the run's uid is the server's own, seen through a user
 * namespace, which owns nothing the server does not.
 */
import { closeSync, constants, fchownSync, fstatSync, lchownSync, lstatSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const DEFAULT_SANDBOX_USER = 'runtrail-sandbox';

export type SandboxIdentity =
  /** The server is not root: commands run as its own uid inside a user namespace. */
  | { switching: false }
  /** The server is root: commands run as this system user. */
  | { switching: true; user: string; uid: number; gid: number }
  /** The server is root and the sandbox user does not exist: no command may start. */
  | { switching: true; user: string; uid: null; gid: null };

/** The sandbox user's name for this environment. */
export function sandboxUserName(env: NodeJS.ProcessEnv = process.env): string {
  return env.RUNTRAIL_SANDBOX_USER?.trim() || DEFAULT_SANDBOX_USER;
}

/** A user's uid and gid from the passwd file, or null when there is no such user. */
export function lookupUser(name: string, passwd = '/etc/passwd'): { uid: number; gid: number } | null {
  let text: string;
  try {
    text = readFileSync(passwd, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined && /^\d+$/.test(uid) && /^\d+$/.test(gid)) return { uid: Number(uid), gid: Number(gid) };
  }
  return null;
}

let cached: SandboxIdentity | null = null;

/** The identity sandboxes of this process run as (looked up once). */
export function sandboxIdentity(opts: { refresh?: boolean } = {}): SandboxIdentity {
  if (cached && !opts.refresh) return cached;
  if (process.getuid?.() !== 0) cached = { switching: false };
  else {
    const user = sandboxUserName();
    const found = lookupUser(user);
    cached = found && found.uid !== 0 ? { switching: true, user, ...found } : { switching: true, user, uid: null, gid: null };
  }
  return cached;
}

/** The sandbox user of a root server, when it exists: files in folders it owns are given to it. */
export function sandboxOwner(): { uid: number; gid: number } | null {
  const id = sandboxIdentity();
  return id.switching && id.uid !== null ? { uid: id.uid, gid: id.gid } : null;
}

/**
 * Why the sandbox user could not read `path` itself (its mode bits, as they apply to that user), or
 * null when it can or the path is gone. The folders above it do not matter: the launcher mounts it.
 */
export function unreadableBy(path: string, owner: { uid: number; gid: number }): string | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  const shift = st.uid === owner.uid ? 6 : st.gid === owner.gid ? 3 : 0;
  const need = st.isDirectory() ? 0o5 : 0o4;
  if (((st.mode >> shift) & need) === need) return null;
  return `${path} is mode ${(st.mode & 0o777).toString(8).padStart(4, '0')} owned by uid ${st.uid}`;
}

/**
 * Hands a folder a run writes to the sandbox user when root owns it (a folder the server made): the
 * folder and what root owns below it, except `.git` folders (they stay the operator's). Once the
 * folder is the user's this costs one lstat: what the server adds later it gives to the user as it
 * writes (confined-files), or with giveTree.
 */
export function handOver(dir: string, owner: { uid: number; gid: number }): void {
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return;
  }
  if (st.isDirectory() && st.uid === 0 && !shared(st)) giveTree(dir, owner);
}

/**
 * A folder others share (sticky or writable by all, as /tmp): never handed over, nor walked into.
 * The sandbox's user may write it already, and what lies in it is other people's.
 */
function shared(st: { mode: number }): boolean {
  return (st.mode & 0o1002) !== 0;
}

/**
 * Gives what root owns in the folder `dir` (itself included) to `owner`, but `.git` folders. Every name is reached through the descriptor of the folder that holds it and changed
 * without following links, so a run swapping a folder for a link cannot aim this at a host file.
 */
export function giveTree(dir: string, owner: { uid: number; gid: number }): void {
  let device = -1;
  const walk = (fd: number, path: string) => {
    const st = fstatSync(fd);
    // another file system mounted inside, or a shared folder: not the run's to take
    if (device === -1) device = st.dev;
    else if (st.dev !== device || shared(st)) return;
    if (st.uid === 0) fchownSync(fd, owner.uid, owner.gid);
    for (const e of readdirSync(fdPath(fd), { withFileTypes: true })) {
      const child = join(path, e.name);
      if (e.name === '.git') continue;
      if (!e.isDirectory()) {
        try {
          if (lstatSync(fdPath(fd, e.name)).uid === 0) lchownSync(fdPath(fd, e.name), owner.uid, owner.gid);
        } catch {
          /* gone meanwhile */
        }
        continue;
      }
      let sub: number;
      try {
        sub = openSync(fdPath(fd, e.name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch {
        continue; // gone, or no longer a folder
      }
      try {
        walk(sub, child);
      } finally {
        closeSync(sub);
      }
    }
  };
  const top = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    walk(top, dir);
  } finally {
    closeSync(top);
  }
}

/** `/proc/self/fd/N[/name]`: a name resolved in the folder a descriptor holds, whatever its path is now. */
function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}
