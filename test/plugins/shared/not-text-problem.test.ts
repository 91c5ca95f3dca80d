import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notTextProblem } from '../../../src/plugins/shared/not-text-problem.js';

const dir = mkdtempSync(join(tmpdir(), 'not-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(bytes: Uint8Array | string): string {
  const p = join(dir, `f${n++}`);
  writeFileSync(p, bytes);
  return p;
}

/** A PNG's real first bytes: signature, then the IHDR chunk (its length starts with NULs). */
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);

describe('notTextProblem', () => {
  it.each([
    ['UTF-8 with CJK and accents', Buffer.from('id,text\n1,同步总是冲突\n2,La sincronización falla\n')],
    ['UTF-8 with a BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('id,text\n1,ok\n')])],
    ['UTF-16LE with a BOM (NUL bytes are its encoding)', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('id,text\n1,ok\n', 'utf16le')])],
    ['Windows-1252 (é as one byte)', Buffer.from('id,text\n1,Valoraci\xf3n baja, caf\xe9\n', 'latin1')],
    ['a character cut at the 64 KiB boundary', Buffer.from(`id,text\n${'1,'.padEnd(64 * 1024 - 1, 'a')}同步\n`)],
    ['an empty file (the empty check speaks for it)', Buffer.alloc(0)],
  ])('reads %s as text', async (_what, bytes) => {
    expect(await notTextProblem(file(bytes))).toBeNull();
  });

  it('refuses a PNG by name, without echoing its bytes', async () => {
    const problem = await notTextProblem(file(PNG));
    expect(problem).toBe(
      'this is not text but a PNG image (a NUL byte at byte 9); the input must be a CSV text file: save or export it as CSV (UTF-8) and try again',
    );
    expect(problem).not.toMatch(/IHDR|\uFFFD/);
    expect(problem).not.toContain(String.fromCharCode(0));
  });

  it('refuses random binary, a NUL in otherwise plain text, an xlsx and undefined Windows-1252 bytes', async () => {
    const random = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
    expect(await notTextProblem(file(random))).toMatch(/^this is not text but a binary file \(/);
    expect(await notTextProblem(file(Buffer.from('id,text\n1,fine\u0000\n')))).toContain('a NUL byte at byte 15');
    expect(await notTextProblem(file(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 6, 0])))).toContain('a ZIP archive (an Excel .xlsx workbook is one)');
    expect(await notTextProblem(file(Buffer.from('id,text\n1,caf\xe9 \x81\n', 'latin1')))).toContain('a byte that is not a character in UTF-8 or Windows-1252');
    expect(await notTextProblem(file(Buffer.from(`id,text\n1,${'\u0001\u0002'.repeat(10)}\n`)))).toContain('control codes');
  });
});
