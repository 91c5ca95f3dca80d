import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function isRuntrailPackage(dir: string): boolean {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'runtrail';
  } catch {
    return false;
  }
}

/** The folder holding Runtrail's package.json (works from src/ under vitest and from dist/ when built). */
export function runtrailPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (isRuntrailPackage(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/** Bundled skills: `<package>/skills`. */
export function defaultSkillsDir(): string {
  return join(runtrailPackageRoot(), 'skills');
}
