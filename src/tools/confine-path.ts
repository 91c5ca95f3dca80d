/**
 * Paths confined to roots: resolved (NUL bytes, `..`, absolute paths, symlinks via realpath, dangling
 * links followed by hand) and refused outside. The run workspace and the file tools share it.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Why a path was refused, for a tool's error code: it leads outside, nothing is there, or it is not a regular file. */
export type PathRefusal = 'refused' | 'not_found' | 'not_a_file' | 'too_slow';

export class WorkspacePathError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    readonly refusal: PathRefusal = 'refused',
  ) {
    super(`path ${JSON.stringify(path)} refused: ${reason}`);
    this.name = 'WorkspacePathError';
  }
}

export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/**
 * realpath of the longest existing prefix, with the missing tail re-attached (for files not yet written).
 * A dangling symlink on the way is followed by hand: a write through it lands where it points, so that
 * is the path to check.
 */
export function realpathLoose(p: string, hops = 0): string {
  let head = p;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch {
      let link: string | null = null;
      try {
        if (lstatSync(head).isSymbolicLink()) link = readlinkSync(head);
      } catch {
        /* nothing there: go up */
      }
      if (link !== null) {
        if (hops >= 40) throw new WorkspacePathError(p, 'too many levels of symbolic links');
        const target = resolve(dirname(head), link);
        return realpathLoose(tail.length ? join(target, ...tail.reverse()) : target, hops + 1);
      }
      const parent = dirname(head);
      if (parent === head) return p;
      tail.push(basename(head));
      head = parent;
    }
  }
}

/** `p` (relative to `root`, or absolute) resolved and checked to lie inside `root`; throws WorkspacePathError. */
export function confinePath(root: string, p: string, what = 'the folder'): string {
  if (typeof p !== 'string' || p.length === 0) throw new WorkspacePathError(String(p), 'empty path');
  if (p.includes('\0')) throw new WorkspacePathError(p, 'contains a NUL byte');
  const real = realpathLoose(resolve(root, p));
  if (!isInside(real, realpathLoose(root))) throw new WorkspacePathError(p, `outside ${what}`);
  return real;
}
