import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replaceFile, SYNC_WRITE_MAX_CHARS } from '../../../src/runtime/storage/replace-file.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('replaceFile', () => {
  it.each([true, false])('puts the new content in place of the old file and leaves no temp file (sync: %s)', async (sync) => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'run_status.json');
    writeFileSync(target, '{"status":"queued"}\n');
    const content = `${JSON.stringify({ status: 'running', goal: '分析 phản hồi ✓' })}\n`;
    await replaceFile(`${target}.tmp-1`, target, content, { sync });
    expect(readFileSync(target, 'utf8')).toBe(content);
    expect(readdirSync(dir)).toEqual(['run_status.json']);
  });

  // with `sync`, small files are written with synchronous calls, large ones through the thread pool: the same outcome
  const large = `${JSON.stringify({ rows: 'phản hồi ✓ '.repeat(Math.ceil(SYNC_WRITE_MAX_CHARS / 10)) })}\n`;

  it('replaces a file larger than the synchronous limit whole, multi-byte text intact', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'metrics.json');
    writeFileSync(target, '{}\n');
    expect(large.length).toBeGreaterThan(SYNC_WRITE_MAX_CHARS);
    await replaceFile(`${target}.tmp-2`, target, large, { sync: true });
    expect(readFileSync(target, 'utf8')).toBe(large);
    expect(readdirSync(dir)).toEqual(['metrics.json']);
  });

  it.each([
    ['small', '{}'],
    ['large', large],
  ])('rejects a %s write with the file-system error when the folder is gone, and the target is not touched', async (_size, content) => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'gone', 'status.json');
    await expect(replaceFile(`${target}.tmp`, target, content, { sync: true })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(existsSync(target)).toBe(false);
  });
});
