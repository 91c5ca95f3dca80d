/** A small CSV's rows are kept in memory; the analysis must be the very one the index file gives. */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FeedbackDataset, MEMORY_LIMITS, type MemoryLimits } from '../../src/plugins/feedbacklens/feedback-dataset.js';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { RunWorkspace } from '../../src/runtime/storage/run-workspace.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function dataset(memory: MemoryLimits | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'rt-dataset-'));
  dirs.push(dir);
  const ws = new RunWorkspace(join(dir, 'runs'), 'run_20260101_000000_000001');
  await ws.createDirs();
  mkdirSync(join(ws.root, 'input'), { recursive: true });
  copyFileSync(join(runtrailPackageRoot(), 'examples', 'feedback.csv'), join(ws.root, 'input', 'feedback.csv'));
  const data = new FeedbackDataset(ws, 'input/feedback.csv', undefined, 'Acme', memory);
  const loaded = await data.load();
  if (!loaded.ok) throw new Error(loaded.error);
  return { data, loaded: loaded.value };
}

describe('FeedbackDataset', () => {
  it('gives the same statistics, pages, id lookups and searches from memory as from the index file', async () => {
    const mem = await dataset(undefined);
    const disk = await dataset({ ...MEMORY_LIMITS, rows: 0 });
    expect(mem.loaded.memory?.length).toBe(mem.loaded.index.entries);
    expect(disk.loaded.memory).toBeNull();
    const [a, b] = [await mem.data.analyse(mem.loaded), await disk.data.analyse(disk.loaded)];
    expect(a.themes.length).toBeGreaterThan(0);
    expect(a).toEqual(b);
    expect(await mem.data.rows(mem.loaded, 3, 5)).toEqual(await disk.data.rows(disk.loaded, 3, 5));
    const ids = (await disk.data.rows(disk.loaded, 0, 4)).map((r) => r.feedback_id);
    expect(await mem.data.byIds(mem.loaded, [...ids, 'no-such-id'])).toEqual(await disk.data.byIds(disk.loaded, [...ids, 'no-such-id']));
    const stems = a.themes[0].key_stems;
    expect(await mem.data.search(mem.loaded, stems, 5)).toEqual(await disk.data.search(disk.loaded, stems, 5));
  });

  it('keeps no row in memory when the file is larger than the limit, however few its rows', async () => {
    const big = await dataset({ rows: 1_000_000, fileBytes: 100 });
    expect(big.loaded.memory).toBeNull();
    expect(big.loaded.index.entries).toBeGreaterThan(0);
    expect((await big.data.rows(big.loaded, 0, 2)).length).toBe(2);
  });
});
