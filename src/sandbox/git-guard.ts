/**
 * The operator's repositories stay the operator's: a workdir the operator configured (a policy
 * `write` path, a workdir given with the run) that holds a repository when the run starts has its
 * whole `.git` bound read-only in every sandbox of that run — hooks, config, info, commondir,
 * worktrees, modules and the folder itself (a mount point cannot be renamed, so `mv .git x && git
 * init` fails) — and so do the files its config includes that lie in a place the run may write.
 * Which repositories are guarded is decided once, from the configured workdirs, before the run's
 * first process; each later sandbox checks the folder is still the same one (device and inode, no
 * symlink) and refuses to start otherwise, so nothing a run plants becomes a bind.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export interface RepositoryGuard {
  /** The configured workdir. */
  root: string;
  /** Its `.git` (a folder, or a worktree's pointer file). */
  gitPath: string;
  dev: number;
  ino: number;
  /** What is bound read-only onto itself: the `.git`, then included config files inside writable roots. */
  readOnly: string[];
}

export class RepositoryMovedError extends Error {
  readonly code = 'repository_moved';
}

/** Files the repository's config includes (`include.path`, `includeIf.*.path`), absolute. */
function includedConfigFiles(gitDir: string): string[] {
  let out = '';
  try {
    // reading a config file with --file runs nothing it names (no hooks, no fsmonitor)
    out = execFileSync('git', ['config', '--file', join(gitDir, 'config'), '--get-regexp', '^include(if\\..*)?\\.path$'], {
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  } catch {
    return []; // no include, or no git on this machine (then no host git reads it either)
  }
  const files: string[] = [];
  for (const line of out.split('\n')) {
    const value = line.slice(line.indexOf(' ') + 1).trim();
    if (!line.includes(' ') || !value) continue;
    const expanded = value.startsWith('~/') ? join(homedir(), value.slice(2)) : value;
    files.push(isAbsolute(expanded) ? expanded : resolve(gitDir, expanded));
  }
  return files;
}

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);
}

/**
 * The guard of the repository at `root` (its `.git` right there, not searched for below), or null
 * when there is none, it is a symlink (not the operator's layout: never bound), or another user owns
 * it (the operator's git refuses such a repository as of dubious ownership, and the sandbox could not
 * bind a folder it cannot read). `writableRoots` are every place the run may write: an included
 * config file in one of them is bound read-only too; one that does not exist there yet is refused,
 * since the run could create it.
 */
export function guardRepository(root: string, writableRoots: string[]): RepositoryGuard | null {
  const gitPath = join(root, '.git');
  let st;
  try {
    st = lstatSync(gitPath);
  } catch {
    return null;
  }
  if (st.isSymbolicLink() || (!st.isDirectory() && !st.isFile())) return null;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return null;
  const readOnly = [gitPath];
  if (st.isDirectory()) {
    for (const file of includedConfigFiles(gitPath)) {
      if (inside(gitPath, file) || !writableRoots.some((w) => inside(w, file))) continue;
      let real: string;
      try {
        real = realpathSync(file);
      } catch {
        throw new RepositoryMovedError(
          `${join(gitPath, 'config')} includes ${file}, which does not exist and lies where the run may write; create it or remove the include`,
        );
      }
      if (real !== file)
        throw new RepositoryMovedError(`${join(gitPath, 'config')} includes ${file}, a symlink to ${real} where the run may write; name the file itself`);
      readOnly.push(file);
    }
  }
  return { root, gitPath, dev: st.dev, ino: st.ino, readOnly };
}

/** The bubblewrap arguments of the guards, after checking each `.git` is still the one guarded. */
export function guardArgs(guards: RepositoryGuard[]): string[] {
  const args: string[] = [];
  for (const g of guards) {
    let st;
    try {
      st = lstatSync(g.gitPath);
    } catch {
      st = null;
    }
    let rootNow: string | null = null;
    try {
      rootNow = realpathSync(g.root);
    } catch {
      rootNow = null;
    }
    if (!st || st.isSymbolicLink() || st.dev !== g.dev || st.ino !== g.ino || rootNow !== g.root)
      throw new RepositoryMovedError(
        `the repository ${g.gitPath} is not the one there when the run started (moved, replaced or a symlink now); the sandbox does not start over it`,
      );
    // opened by the launcher: the sandbox's user may not pass through the folders above the workdir
    for (const p of g.readOnly) args.push('--launch-ro-bind', p, p);
  }
  return args;
}

/** The guards of the configured workdirs (each workdir's own `.git`; nested repositories are not searched for). */
export function guardRepositories(workdirs: string[], writableRoots: string[]): RepositoryGuard[] {
  const out: RepositoryGuard[] = [];
  for (const w of new Set(workdirs)) {
    const g = guardRepository(w, writableRoots);
    if (g) out.push(g);
  }
  return out;
}
