import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SRC = join(ROOT, 'src');

/** Every .ts/.tsx file under dir, as posix paths relative to src/. */
export function sourceFiles(dir: string = SRC): string[] {
  const out: string[] = [];
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, ent.name);
    if (ent.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(ent.name) && !ent.name.endsWith('.d.ts')) out.push(relative(SRC, p).split(sep).join('/'));
  }
  return out.sort();
}

export function readSource(rel: string): string {
  return readFileSync(join(SRC, rel), 'utf8');
}

/** Drops // and /* comments so prose about frames does not trip the scans (strings are kept). */
export function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}
