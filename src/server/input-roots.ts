/** A file input named by the web or IM front door must lie under the input roots (uploads by default). */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

export function isUnderRoots(path: string, roots: string[]): boolean {
  if (path.includes('\0')) return false;
  const target = real(resolve(path));
  return roots.some((root) => {
    const rel = relative(real(root), target);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  });
}

/** Issues for every file input outside the roots (empty when all are fine or roots is 'any'). */
export function fileInputIssues(input: unknown, fileInputs: string[], roots: string[] | 'any'): Array<{ path: string; message: string }> {
  if (roots === 'any' || !input || typeof input !== 'object') return [];
  const issues: Array<{ path: string; message: string }> = [];
  for (const field of fileInputs) {
    const v = (input as Record<string, unknown>)[field];
    if (typeof v !== 'string') continue; // absence/type errors are the runtime's to name
    if (!isUnderRoots(v, roots))
      issues.push({ path: `input.${field}`, message: `file must be under the input roots (upload it with POST /api/uploads): ${v}` });
  }
  return issues;
}
