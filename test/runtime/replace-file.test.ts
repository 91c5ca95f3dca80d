import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replaceFile } from '../../src/runtime/replace-file.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('replaceFile', () => {
  it('puts the whole new content in place of the old file, byte for byte, and leaves no temp file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'run_status.json');
    writeFileSync(target, '{"status":"queued"}\n');
    // multi-byte text and a body far larger than one small write
    const content = `${JSON.stringify({ status: 'running', goal: '分析 phản hồi ✓', pad: 'x'.repeat(300_000) })}\n`;
    await replaceFile(`${target}.tmp-1`, target, content);
    expect(readFileSync(target, 'utf8')).toBe(content);
    expect(readdirSync(dir)).toEqual(['run_status.json']);
  });

  it('writes an empty file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'empty.txt');
    await replaceFile(`${target}.tmp`, target, '');
    expect(readFileSync(target, 'utf8')).toBe('');
  });

  it('rejects with the file-system error when the folder is gone, and the target is not touched', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'gone', 'status.json');
    await expect(replaceFile(`${target}.tmp`, target, '{}')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(existsSync(target)).toBe(false);
  });
});
