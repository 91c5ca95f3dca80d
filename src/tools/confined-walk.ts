/**
 * A path resolved beneath a root folder one name at a time, by directory descriptor, so that no swap of
 * a folder or a symlink while it is resolved can lead it outside the root.
 *
 * Why this way: Node 20 has no openat/openat2. Each name is looked up alone, relative to the descriptor
 * of the folder before it, through `/proc/self/fd/<fd>/<name>`: the kernel resolves that from the
 * descriptor (the folder the walk already holds, wherever it has been moved since), never from the path
 * as text. The name is opened with O_PATH|O_NOFOLLOW, which opens the name itself whatever it is: no
 * device is opened, no FIFO waited on, no lease waited for, no link followed; fstat then says what it is.
 * A symlink is read and followed by hand, within the root; `..` leaves a folder the walk holds, never the
 * root. Each step is a non-blocking call that answers at once, so the walk runs on the calling thread and
 * no file-system thread waits on what a run made. The other way, a helper process per run inside the
 * sandbox serving file operations, costs a process per run and a round trip per call, and the run can
 * kill or starve it; this walk costs three calls a name (`npm run bench`: file-tools).
 */
import { closeSync, constants, fstatSync, lchownSync, mkdirSync, openSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { sandboxOwner } from '../sandbox/sandbox-user.js';
import { WorkspacePathError } from './confine-path.js';

/** Linux's O_PATH: Node passes open flags to the kernel as given, and does not name this one. */
export const O_PATH = 0o10000000;
const MAX_LINKS = 40;
const NAME_MAX = 255;

/** The path through a held folder descriptor: the kernel resolves it from the descriptor, not as text. */
export function fdPath(dirFd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${dirFd}` : `/proc/self/fd/${dirFd}/${name}`;
}

/** Where a path led, with the descriptors the walk holds; `close()` releases them. */
export interface Resolved {
  /** Descriptor (O_PATH) of the folder that holds the last name. */
  readonly dirFd: number;
  /** The last name, never a symlink when it was looked up (unless followLast is false). */
  readonly name: string;
  /** The last name's descriptor (O_PATH) and what it was, or null when nothing has that name. */
  readonly fd: number | null;
  readonly stat: Stats | null;
  /** The path as resolved below the root, every link replaced by where it led. */
  readonly path: readonly string[];
  close(): void;
}

export interface WalkOptions {
  /** Folders missing on the way are made (a write's parents). */
  createDirs?: boolean;
  /** A link at the last name is followed (default), or answered as what is there (a name to make anew). */
  followLast?: boolean;
  /** What the caller calls the root in messages (default "the folder"). */
  what?: string;
}

function split(p: string): string[] {
  return p.split('/').filter((n) => n !== '' && n !== '.');
}

function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/** Throws WorkspacePathError for a path that leaves the root, loops, or names a folder on the way that is not one. */
export function resolveBeneath(root: string, rel: string, opts: WalkOptions = {}): Resolved {
  const what = opts.what ?? 'the folder';
  const shown = rel;
  if (rel.includes('\0')) throw new WorkspacePathError(shown, 'contains a NUL byte');
  if (rel === '') throw new WorkspacePathError(shown, 'empty path');
  if (isAbsolute(rel)) throw new WorkspacePathError(shown, `is absolute; paths here are relative to ${what}`);
  const rootFd = openSync(root, O_PATH | constants.O_DIRECTORY);
  const stack: Array<{ fd: number; name: string }> = [{ fd: rootFd, name: '' }];
  let lastFd: number | null = null;
  const close = (): void => {
    if (lastFd !== null) closeSync(lastFd);
    lastFd = null;
    while (stack.length) closeSync(stack.pop()!.fd);
  };
  const outside = () => new WorkspacePathError(shown, `leads outside ${what}`);
  let todo = split(rel);
  let links = 0;
  try {
    while (todo.length) {
      const name = todo.shift()!;
      if (name === '..') {
        if (stack.length === 1) throw outside();
        closeSync(stack.pop()!.fd);
        continue;
      }
      if (Buffer.byteLength(name) > NAME_MAX) throw new WorkspacePathError(shown, `a name in it is longer than ${NAME_MAX} bytes`);
      const top = stack[stack.length - 1];
      let fd: number;
      try {
        fd = openSync(fdPath(top.fd, name), O_PATH | constants.O_NOFOLLOW);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        const names = [...stack.slice(1).map((s) => s.name), name];
        if (todo.length === 0) {
          const dirFd = top.fd;
          return { dirFd, name, fd: null, stat: null, path: names, close };
        }
        if (!opts.createDirs) throw new WorkspacePathError(shown, `${names.join('/')} does not exist`, 'not_found');
        try {
          mkdirSync(fdPath(top.fd, name));
          // in a run's folder on a root server, the folder is the run's user's as the run's own would be
          const owner = sandboxOwner();
          if (owner && fstatSync(top.fd).uid === owner.uid) lchownSync(fdPath(top.fd, name), owner.uid, owner.gid);
        } catch (m) {
          if ((m as NodeJS.ErrnoException).code !== 'EEXIST') throw m;
        }
        todo.unshift(name);
        continue;
      }
      const st = fstatSync(fd);
      if (st.isSymbolicLink() && !(todo.length === 0 && opts.followLast === false)) {
        closeSync(fd);
        if (++links > MAX_LINKS) throw new WorkspacePathError(shown, 'too many levels of symbolic links');
        // read by the folder's descriptor: whatever the name holds now, its text is confined below
        const target = readlinkSync(fdPath(top.fd, name));
        if (isAbsolute(target)) {
          const inside = [root, realRoot(root)].map((r) => relative(r, target)).find((r) => !r.startsWith('..') && !isAbsolute(r));
          if (inside === undefined) throw outside();
          while (stack.length > 1) closeSync(stack.pop()!.fd);
          todo = [...split(inside), ...todo];
        } else {
          todo = [...split(target), ...todo];
        }
        continue;
      }
      if (todo.length === 0) {
        lastFd = fd;
        return { dirFd: top.fd, name, fd, stat: st, path: [...stack.slice(1).map((s) => s.name), name], close };
      }
      if (!st.isDirectory()) {
        closeSync(fd);
        throw new WorkspacePathError(shown, `${[...stack.slice(1).map((s) => s.name), name].join('/')} is not a folder`);
      }
      stack.push({ fd, name });
    }
    throw new WorkspacePathError(shown, `names ${stack.length === 1 ? what : 'a folder'} itself, not a file in it`);
  } catch (e) {
    close();
    throw e;
  }
}
