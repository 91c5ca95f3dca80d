/**
 * File operations on a run's folders that act with the run's rights: every path is resolved beneath its
 * root by descriptor (confined-walk.ts), only regular files are read (a FIFO, device or socket is an
 * error naming the path, never a wait), reads are bounded in size and time, and a write makes a new file
 * beside its target and renames it into place through the held folder, so a link planted at the name is
 * replaced, never written through.
 */
import { closeSync, constants, fchownSync, fstatSync, openSync, read, renameSync, unlinkSync, write, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { sandboxOwner } from '../sandbox/sandbox-user.js';
import { WorkspacePathError } from './confine-path.js';
import { fdPath, O_PATH, resolveBeneath, type WalkOptions } from './confined-walk.js';

/** A path below a root it must not leave (the root is the operator's or Runtrail's, never the run's). */
export interface ConfinedPath {
  root: string;
  /** Relative to root. */
  rel: string;
  /** What messages call the root ("the artifacts of run_…"). */
  what?: string;
  /** Whether the path as resolved (names below root) may be used: narrower scopes inside the root. */
  allow?: (resolved: readonly string[]) => string | null;
}

export interface ReadBounds {
  /** Most bytes read; a larger file is read in its first part. */
  maxBytes: number;
  /** A read that takes longer fails (a file system that hangs must not hold the caller). */
  timeoutMs: number;
}

export const DEFAULT_READ_BOUNDS: Readonly<ReadBounds> = Object.freeze({ maxBytes: 16 * 1024 * 1024, timeoutMs: 10_000 });

let tmpCounter = 0;

/** What a non-regular file is, in words. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function walk(p: ConfinedPath, opts: WalkOptions = {}) {
  const r = resolveBeneath(p.root, p.rel, { what: p.what, ...opts });
  const refused = p.allow?.(r.path) ?? null;
  if (refused !== null) {
    r.close();
    throw new WorkspacePathError(p.rel, refused);
  }
  return r;
}

function readAll(fd: number, buf: Buffer): Promise<number> {
  return new Promise((resolveRead, reject) => {
    let got = 0;
    const next = (): void => {
      if (got >= buf.length) return resolveRead(got);
      read(fd, buf, got, buf.length - got, got, (err, n) => {
        if (err) return reject(err);
        if (n === 0) return resolveRead(got);
        got += n;
        next();
      });
    };
    next();
  });
}

/**
 * The first `maxBytes` of a regular file, and its whole size. Refused (WorkspacePathError): a path that
 * leads outside, nothing there (`not_found`), anything but a regular file (`not_a_file`), a read slower
 * than `timeoutMs` (`too_slow`).
 */
export async function readRegularFile(p: ConfinedPath, bounds: ReadBounds = DEFAULT_READ_BOUNDS): Promise<{ data: Buffer; size: number }> {
  const r = walk(p);
  let fd: number;
  try {
    if (r.fd === null || r.stat === null) throw new WorkspacePathError(p.rel, 'does not exist', 'not_found');
    if (!r.stat.isFile()) throw new WorkspacePathError(p.rel, `is ${kindOf(r.stat)}, not a regular file`, 'not_a_file');
    // the held inode itself, opened for reading: O_NONBLOCK so that a lease on it is an error, not a wait
    fd = openSync(fdPath(r.fd), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } finally {
    r.close();
  }
  const st = fstatSync(fd);
  const buf = Buffer.alloc(Math.min(st.size, bounds.maxBytes));
  let timer: NodeJS.Timeout | undefined;
  const reading = readAll(fd, buf).finally(() => closeSync(fd));
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WorkspacePathError(p.rel, `was not read within ${bounds.timeoutMs} ms`, 'too_slow')), bounds.timeoutMs);
  });
  try {
    const n = await Promise.race([reading, late]);
    return { data: n === buf.length ? buf : buf.subarray(0, n), size: st.size };
  } finally {
    clearTimeout(timer);
    // a read that lost the race still ends (and closes its descriptor); its failure is no one's
    reading.catch(() => {});
  }
}

function writeAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((done, reject) => {
    let off = 0;
    const next = (): void => {
      if (off >= data.length) return done();
      write(fd, data, off, data.length - off, off, (err, n) => {
        if (err) return reject(err);
        off += n;
        next();
      });
    };
    next();
  });
}

/**
 * Writes `content` as the file `p` names (its folders made as needed): a new file in the same folder,
 * renamed over the name through the held folder descriptor. Returns the path as resolved.
 */
export async function replaceFileBeneath(p: ConfinedPath, content: Uint8Array): Promise<readonly string[]> {
  const r = walk(p, { createDirs: true });
  try {
    if (r.stat?.isDirectory()) throw new WorkspacePathError(p.rel, 'is a folder', 'not_a_file');
    const tmp = `.runtrail-tmp-${process.pid}-${++tmpCounter}`;
    const fd = openSync(fdPath(r.dirFd, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
    try {
      runsFile(r.dirFd, fd);
      try {
        await writeAll(fd, Buffer.from(content.buffer, content.byteOffset, content.byteLength));
      } finally {
        closeSync(fd);
      }
      renameSync(fdPath(r.dirFd, tmp), fdPath(r.dirFd, r.name));
    } catch (e) {
      try {
        unlinkSync(fdPath(r.dirFd, tmp));
      } catch {
        /* renamed already, or never made */
      }
      throw e;
    }
    return r.path;
  } finally {
    r.close();
  }
}

/**
 * A new file `p` names, which must not exist yet (its folder must): the descriptor, open for writing.
 * The caller closes it.
 */
export function createFileBeneath(p: ConfinedPath): number {
  const r = walk(p, { followLast: false });
  try {
    if (r.fd !== null) {
      const e = new Error(`${p.rel} exists`) as NodeJS.ErrnoException;
      e.code = 'EEXIST';
      throw e;
    }
    const fd = openSync(fdPath(r.dirFd, r.name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    runsFile(r.dirFd, fd);
    return fd;
  } finally {
    r.close();
  }
}

/**
 * A file made in a folder the sandbox user owns (a run's, on a root server) is given to that user, as
 * if the run had made it: its commands may then change what the server wrote for it.
 */
function runsFile(dirFd: number, fd: number): void {
  const owner = sandboxOwner();
  if (owner && fstatSync(dirFd).uid === owner.uid) fchownSync(fd, owner.uid, owner.gid);
}

/**
 * Every regular file below the folder `p` names, with its size, by path (posix, relative to that
 * folder); links and other kinds are left out. Empty when the folder does not exist. At most
 * `maxEntries` names are looked at: more is an error saying so, not a list cut short.
 */
export async function listFilesBeneath(p: ConfinedPath, maxEntries = 100_000): Promise<Array<{ path: string; bytes: number }>> {
  let r;
  try {
    r = walk(p);
  } catch (e) {
    if (e instanceof WorkspacePathError && e.refusal === 'not_found') return [];
    throw e;
  }
  const out: Array<{ path: string; bytes: number }> = [];
  let seen = 0;
  const visit = async (dirFd: number, prefix: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(fdPath(dirFd));
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > maxEntries) throw new WorkspacePathError(p.rel, `holds more than ${maxEntries} entries`);
      if (name.startsWith('.runtrail-tmp-')) continue;
      let fd: number;
      try {
        fd = openSync(fdPath(dirFd, name), O_PATH | constants.O_NOFOLLOW);
      } catch {
        continue; // gone since the folder was read
      }
      try {
        const st = fstatSync(fd);
        if (st.isDirectory()) await visit(fd, `${prefix}${name}/`);
        else if (st.isFile()) out.push({ path: `${prefix}${name}`, bytes: st.size });
      } finally {
        closeSync(fd);
      }
    }
  };
  try {
    if (r.fd === null || r.stat === null) return [];
    if (!r.stat.isDirectory()) throw new WorkspacePathError(p.rel, `is ${kindOf(r.stat)}, not a folder`, 'not_a_file');
    await visit(r.fd, '');
  } finally {
    r.close();
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
