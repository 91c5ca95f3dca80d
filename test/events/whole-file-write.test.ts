import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeWholeFile } from '../../src/events/whole-file-write.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('writeWholeFile', () => {
  it("'w' replaces the content byte for byte, multi-byte text and a body far larger than one write included", async () => {
    dir = mkdtempSync(join(tmpdir(), 'whole-'));
    const file = join(dir, 'f.json');
    writeFileSync(file, 'old content that is longer than nothing');
    const content = `${JSON.stringify({ goal: '分析 phản hồi ✓', pad: 'x'.repeat(300_000) })}\n`;
    await writeWholeFile(file, content, 'w');
    expect(readFileSync(file, 'utf8')).toBe(content);
    await writeWholeFile(file, '', 'w');
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it("'a' appends after what is there, and creates the file", async () => {
    dir = mkdtempSync(join(tmpdir(), 'whole-'));
    const file = join(dir, 'op.jsonl');
    await writeWholeFile(file, '{"n":1}\n', 'a');
    await writeWholeFile(file, '{"n":2}\n', 'a');
    expect(readFileSync(file, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
  });

  it('rejects with the file-system error (ENOENT for a missing folder, EISDIR for a folder)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'whole-'));
    await expect(writeWholeFile(join(dir, 'gone', 'f'), 'x', 'w')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(writeWholeFile(dir, 'x', 'a')).rejects.toMatchObject({ code: 'EISDIR' });
  });
});
