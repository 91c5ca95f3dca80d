/**
 * A TenantScope is made by the auth layer only: `TenantScope.mint` appears in the authenticator (and
 * the class itself), nowhere else under src/. With the store's methods taking a scope, a route cannot
 * read another tenant's data by making one up.
 */
import { describe, expect, it } from 'vitest';
import { readSource, sourceFiles } from './source-files.js';

const MINTERS = new Set(['tenants/authenticator.ts', 'tenants/tenant-scope.ts']);

export function scopeMinters(files: Array<{ file: string; source: string }>): string[] {
  return files.filter((f) => /TenantScope\s*\.\s*mint\b|\[\s*['"]mint['"]\s*\]/.test(f.source)).map((f) => f.file);
}

describe('TenantScope', () => {
  it('is minted by the auth layer only', () => {
    const bad = scopeMinters(sourceFiles().map((file) => ({ file, source: readSource(file) }))).filter((f) => !MINTERS.has(f));
    expect(bad, bad.join('\n')).toEqual([]);
  });

  it('the check finds a mint outside the auth layer', () => {
    expect(scopeMinters([{ file: 'server/x.ts', source: 'const s = TenantScope.mint({ role: "owner" });' }])).toEqual(['server/x.ts']);
    expect(scopeMinters([{ file: 'server/x.ts', source: "const s = (TenantScope as any)['mint'](id);" }])).toEqual(['server/x.ts']);
  });
});
