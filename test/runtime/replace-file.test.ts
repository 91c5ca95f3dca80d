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
  it('puts the new content in place of the old file and leaves no temp file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'run_status.json');
    writeFileSync(target, '{"status":"queued"}\n');
    const content = `${JSON.stringify({ status: 'running', goal: '分析 phản hồi ✓' })}\n`;
    await replaceFile(`${target}.tmp-1`, target, content);
    expect(readFileSync(target, 'utf8')).toBe(content);
    expect(readdirSync(dir)).toEqual(['run_status.json']);
  });

  it('rejects with the file-system error when the folder is gone, and the target is not touched', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replace-'));
    const target = join(dir, 'gone', 'status.json');
    await expect(replaceFile(`${target}.tmp`, target, '{}')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(existsSync(target)).toBe(false);
  });
});
