/** The audit log's hash chain: verify holds on an untouched log and names an edited or removed line. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, auditPaths } from '../../src/tenants/audit-log.js';

let dir = '';
let log: AuditLog;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-audit-'));
  log = new AuditLog(dir);
  for (let i = 1; i <= 5; i++)
    await log.append({ action: 'key.created', actor: { tenant: 'acme', user: 'al', key_id: null }, tenant: 'acme', target: `key:${i}` });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lines = () => readFileSync(auditPaths(dir).log, 'utf8').trimEnd().split('\n');
const rewrite = (ls: string[]) => writeFileSync(auditPaths(dir).log, `${ls.join('\n')}\n`);

describe('AuditLog', () => {
  it('chains its lines and verifies an untouched log; the file is owner-only', async () => {
    expect(await log.verify()).toEqual({ lines: 5, problem: null });
    expect(statSync(auditPaths(dir).log).mode & 0o777).toBe(0o600);
    expect((await log.read((l) => l.target === 'key:3'))[0].seq).toBe(3);
  });

  it('names an edited line', async () => {
    const ls = lines();
    ls[1] = ls[1].replace('key:2', 'key:9');
    rewrite(ls);
    expect((await log.verify()).problem).toMatchObject({ line: 2, message: expect.stringContaining('line 2 (seq 2) was edited') });
  });

  it('names a removed line', async () => {
    const ls = lines();
    ls.splice(2, 1);
    rewrite(ls);
    expect((await log.verify()).problem).toMatchObject({ line: 3, message: expect.stringContaining('seq 3') });
  });

  it('finds the last line edited or cut off', async () => {
    const ls = lines();
    rewrite([...ls.slice(0, 4), ls[4].replace('key:5', 'key:0')]);
    expect((await log.verify()).problem?.message).toContain('line 5 (seq 5), the last, was edited');
    rewrite(ls.slice(0, 4));
    expect((await log.verify()).problem?.message).toContain('seq 5..5 were removed from its end');
  });

  it('keeps one chain when two writers append at once', async () => {
    const other = new AuditLog(dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? log : other).append({ action: 'x', actor: null, tenant: null })));
    expect(await log.verify()).toEqual({ lines: 25, problem: null });
  });
});
