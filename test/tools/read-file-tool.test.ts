import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRegularFile } from '../../src/tools/confined-files.js';
import { createReadFileTool } from '../../src/tools/read-file-tool.js';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'read-file-'));
  mkdirSync(join(dir, 'input'));
  writeFileSync(join(dir, 'input', 'lines.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  writeFileSync(join(dir, 'input', 'blob.bin'), Buffer.from([1, 2, 0, 3]));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const tool = (maxChars?: number) =>
  createReadFileTool({
    files: { readFile: (p, bounds) => readRegularFile({ root: dir, rel: p, allow: (names) => (names[0] === 'input' ? null : 'outside input/') }, bounds) },
    schemes: { demo: (rest) => ({ root: join(dir, 'input'), rel: rest }) },
    ...(maxChars ? { maxChars } : {}),
  });

describe('read_file', () => {
  it('pages by lines and says how to read on', async () => {
    const r = await tool().execute({ path: 'input/lines.txt', offset: 3, limit: 2 });
    expect(r.content).toBe('line 3\nline 4\n[input/lines.txt: lines 3–4 of 10; call read_file with offset=5 to read on]');
    expect(r.details).toMatchObject({ from_line: 3, to_line: 4, total_lines: 10, truncated: true });
    const whole = await tool().execute({ path: 'input/lines.txt' });
    expect(whole.content.split('\n')).toHaveLength(10);
  });

  it('cuts at maxChars on a line boundary', async () => {
    const r = await tool(20).execute({ path: 'input/lines.txt' });
    expect(r.content.startsWith('line 1\nline 2\nline 3\n[')).toBe(true);
  });

  it('refuses binary files, missing files, offsets past the end, paths outside and unknown schemes with a diagnosis', async () => {
    const codes = await Promise.all(
      [
        { path: 'input/blob.bin' },
        { path: 'input/none.txt' },
        { path: 'input/lines.txt', offset: 99 },
        { path: 'input/../../etc/passwd' },
        { path: 'other://x' },
      ].map(async (a) => (await tool().execute(a)).diagnosis?.code),
    );
    expect(codes).toEqual(['binary_file', 'not_found', 'bad_offset', 'path_refused', 'path_refused']);
  });

  it('reads through a granted scheme', async () => {
    expect((await tool().execute({ path: 'demo://lines.txt', limit: 1 })).content.split('\n')[0]).toBe('line 1');
  });
});
