/**
 * No import cycles between files under src/: a module's dependencies load before it, and a file can be
 * read without the ones that import it. Type-only imports count too: a cycle of types is still two
 * files that cannot be understood (or moved) one without the other.
 */
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, readSource, sourceFiles, SRC } from './source-files.js';

/** The file (relative to src/, posix) an import of `from` names, or null for a package or a missing file. */
function target(from: string, spec: string, exists: (rel: string) => boolean): string | null {
  if (!spec.startsWith('.')) return null;
  const base = normalize(join(dirname(from), spec))
    .split('\\')
    .join('/');
  for (const candidate of [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base]) if (exists(candidate)) return candidate;
  return null;
}

/** Each cycle (a strongly connected set of two or more files, or a file importing itself), sorted. */
export function importCycles(sources: Map<string, string>, exists: (rel: string) => boolean = (r) => sources.has(r)): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const to = importsOf(file, text)
      .map((i) => target(file, i.spec, exists))
      .filter((t): t is string => t !== null && sources.has(t));
    edges.set(file, to);
  }
  // Tarjan's strongly connected components, iterative (no deep recursion over a long chain)
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  for (const root of sources.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1];
      const out = edges.get(top.v) ?? [];
      if (top.i < out.length) {
        const w = out[top.i++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) low.set(work[work.length - 1].v, Math.min(low.get(work[work.length - 1].v)!, low.get(top.v)!));
      if (low.get(top.v) === index.get(top.v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== top.v);
        if (component.length > 1 || out.includes(top.v)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

describe('import cycles', () => {
  it('no two files under src/ import each other, directly or through others (type-only imports included)', () => {
    const sources = new Map(sourceFiles().map((f) => [f, readSource(f)]));
    const cycles = importCycles(sources, (rel) => sources.has(rel) || existsSync(join(SRC, rel)));
    expect(
      cycles.map((c) => c.join(' → ')),
      cycles.map((c) => c.join(' ↔ ')).join('\n'),
    ).toEqual([]);
  });

  it('the check really finds cycles: through a type-only import, a dynamic import, a re-export, a longer ring', () => {
    const found = (files: Record<string, string>) => importCycles(new Map(Object.entries(files)));
    expect(found({ 'runtime/a.ts': `import { b } from './b.js';`, 'runtime/b.ts': `import type { A } from './a.js';` })).toEqual([
      ['runtime/a.ts', 'runtime/b.ts'],
    ]);
    expect(found({ 'cli/a.ts': `const m = await import('./b.js');`, 'cli/b.ts': `export { a } from './a.js';` })).toEqual([['cli/a.ts', 'cli/b.ts']]);
    expect(found({ 'x/a.ts': `import './b.js';`, 'x/b.ts': `import '../y/c.js';`, 'y/c.ts': `import { a } from '../x/a.js';` })).toEqual([
      ['x/a.ts', 'x/b.ts', 'y/c.ts'],
    ]);
    expect(found({ 'x/a.ts': `import { b } from './b.js';`, 'x/b.ts': `import { z } from 'zod';` })).toEqual([]);
  });
});
