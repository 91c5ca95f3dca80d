/**
 * How the person at this shell runs this `runtrail`: the words the CLI writes before every command it
 * prints (init's next step, hints in errors), so that a printed line runs as printed from the folder
 * it was printed in.
 *
 * - `runtrail` when a `runtrail` on PATH is this very program (npm link, a global install);
 * - `npx runtrail` inside a Runtrail checkout: npm exec finds the package's own `bin` in the
 *   current project (nothing is downloaded, nothing installed globally);
 * - else `node <absolute path of this main.js>`: outside the checkout `npx runtrail` would ask the
 *   registry for a package of that name.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { runtrailPackageRoot } from '../runtime/package-root.js';

function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** The built entry of this package (dist/src/cli/main.js), whether this code runs from dist/ or src/. */
export function runtrailMain(): string {
  return join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
}

/** A `runtrail` on PATH that is this package's entry. */
function onPath(pathVar: string | undefined, main: string): boolean {
  const target = real(main);
  if (!target) return false;
  for (const dir of (pathVar ?? '').split(delimiter)) {
    // npm exec and npm run put node_modules/.bin folders (npx's cache among them) on the PATH of the
    // process they start: the shell the user types into does not have them
    if (!dir || /node_modules[\\/]\.bin[\\/]?$|node-gyp-bin/.test(dir)) continue;
    const candidate = join(dir, 'runtrail');
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    // the first runtrail on PATH is the one a shell runs
    return real(candidate) === target;
  }
  return false;
}

/** npm's project folder for `cwd`: the nearest folder upward holding package.json or node_modules. */
function npmProject(cwd: string): string | null {
  let dir = cwd;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) || existsSync(join(dir, 'node_modules'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function isRuntrailProject(dir: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; bin?: unknown };
    return pkg.name === 'runtrail' && typeof pkg.bin === 'object' && pkg.bin !== null && 'runtrail' in pkg.bin;
  } catch {
    return false;
  }
}

/** A shell word: bare when it is plain, else single-quoted. */
export function shellWord(s: string): string {
  return /^[\w./=:@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The prefix of a printed command, for a shell in `cwd` with this environment's PATH. */
export function runtrailCommand(cwd: string, env: Record<string, string | undefined>): string {
  const main = runtrailMain();
  if (onPath(env.PATH, main)) return 'runtrail';
  const project = npmProject(cwd);
  if (project && isRuntrailProject(project)) return 'npx runtrail';
  return `node ${shellWord(main)}`;
}

/** A command to print for this shell (`hintCommand(deps, 'validate')` → `npx runtrail validate` in a checkout). */
export function hintCommand(deps: { cwd: string; env: Record<string, string | undefined> }, rest: string): string {
  return `${runtrailCommand(deps.cwd, deps.env)} ${rest}`;
}
