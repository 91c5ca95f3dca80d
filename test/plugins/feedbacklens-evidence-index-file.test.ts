/** runtime/evidence_index.json written as rows stream, read back a line at a time. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FeedbackRow } from '../../src/plugins/feedbacklens/analysis/feedback-row.js';
import {
  CHECKPOINT_EVERY,
  entryJson,
  EvidenceIndexWriter,
  findEntries,
  forEachEntry,
  readEntries,
  readEntriesAt,
  StaleIndexError,
  type EvidenceIndexHandle,
} from '../../src/plugins/feedbacklens/evidence-index-file.js';

let dir: string;
let target: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-index-'));
  target = join(dir, 'evidence_index.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const META = { source: 'input/fb.csv', encoding: 'utf-8', id_source: 'column' as const, id_column: 'id', text_column: 'text' };

/** Rows whose ids and texts need escaping: quotes, backslashes, newlines, U+2028, non-Latin text. */
function rows(n: number): FeedbackRow[] {
  return Array.from({ length: n }, (_, i) => ({
    feedback_id: i % 97 === 0 ? `F"${i}\\x` : `F${i}`,
    row: i + 2,
    text: i % 5 === 0 ? `line one ${i}\nline two\u2028同步失败 "quoted"` : `plain text ${i}`,
    rating: i % 3 === 0 ? null : (i % 5) + 1,
    channel: i % 4 === 0 ? null : 'email',
    date: i % 2 === 0 ? '2026-06-01' : null,
    extra: (i % 7 === 0 ? { plan: 'Pro', note: 'a,b' } : {}) as Record<string, string>,
  }));
}

async function write(rs: FeedbackRow[]): Promise<EvidenceIndexHandle> {
  const w = await EvidenceIndexWriter.create(target, META);
  for (const r of rs) await w.add(r);
  return w.finish(rs.length + 3);
}

describe('the evidence index file', () => {
  it('writes each entry line as JSON.stringify writes the entry: same keys, order, escapes and numbers', () => {
    const odd: FeedbackRow[] = [
      { feedback_id: 'x', row: 2, text: '', rating: 4.5, channel: null, date: null, extra: {} },
      { feedback_id: 'y', row: 3, text: 't', rating: Number.NaN, channel: '\u0000', date: null, extra: { '': '' } },
      { feedback_id: 'z', row: 4, text: '\ud800 lone surrogate', rating: -0, channel: null, date: '2026', extra: {} },
    ];
    for (const r of [...rows(50), ...odd]) {
      const entry = {
        feedback_id: r.feedback_id,
        row: r.row,
        text: r.text,
        ...(r.rating !== null ? { rating: r.rating } : {}),
        ...(r.channel !== null ? { channel: r.channel } : {}),
        ...(r.date !== null ? { date: r.date } : {}),
        ...(Object.keys(r.extra).length ? { extra: r.extra } : {}),
      };
      expect(entryJson(r)).toBe(JSON.stringify(entry));
    }
  });

  it('is one JSON document with every row, one entry per line', async () => {
    const rs = rows(3000);
    const h = await write(rs);
    expect(h.entries).toBe(3000);
    expect(h.checkpoints).toHaveLength(Math.ceil(3000 / CHECKPOINT_EVERY));
    const text = readFileSync(target, 'utf8');
    const doc = JSON.parse(text);
    expect(doc).toMatchObject({ version: 1, ...META, total_rows: 3003, indexed_rows: 3000 });
    expect(doc.entries).toHaveLength(3000);
    expect(doc.entries[5]).toEqual({ feedback_id: 'F5', row: 7, text: rs[5].text, rating: 1, channel: 'email' });
    expect(doc.entries[0]).toEqual({
      feedback_id: 'F"0\\x',
      row: 2,
      text: rs[0].text,
      channel: undefined,
      date: '2026-06-01',
      extra: { plan: 'Pro', note: 'a,b' },
    });
    expect(text.trimEnd().split('\n')).toHaveLength(3000 + 2);
  });

  it('reads back the same rows: all in order, a page across a checkpoint, chosen positions, chosen ids', async () => {
    const rs = rows(3000);
    const h = await write(rs);
    const all: FeedbackRow[] = [];
    await forEachEntry(h, (r, i) => {
      expect(i).toBe(all.length);
      all.push(r);
    });
    expect(all).toEqual(rs);
    expect(await readEntries(h, CHECKPOINT_EVERY - 3, 7)).toEqual(rs.slice(CHECKPOINT_EVERY - 3, CHECKPOINT_EVERY + 4));
    expect(await readEntries(h, 2995, 100)).toEqual(rs.slice(2995));
    expect(await readEntries(h, 3000, 10)).toEqual([]);
    const at = await readEntriesAt(h, [2999, 0, 1500, 1500, 5000]);
    expect([...at.keys()].sort((a, b) => a - b)).toEqual([0, 1500, 2999]);
    expect(at.get(1500)).toEqual(rs[1500]);
    const found = await findEntries(h.path, ['F2999', 'F"97\\x', 'nope']);
    expect([...found.keys()].sort()).toEqual(['F"97\\x', 'F2999']);
    expect(found.get('F"97\\x')).toEqual(rs[97]);
  });

  it('only the wanted positions are parsed: want() skips the rest', async () => {
    const h = await write(rows(2100));
    const seen: number[] = [];
    await forEachEntry(
      h,
      (_, i) => seen.push(i),
      (i) => i % 700 === 0,
    );
    expect(seen).toEqual([0, 700, 1400]);
  });

  it('leaves nothing behind when aborted, and the earlier index in place', async () => {
    await write(rows(10));
    const w = await EvidenceIndexWriter.create(target, META);
    await w.add(rows(1)[0]);
    await w.abort();
    expect(readdirSync(dir)).toEqual(['evidence_index.json']);
    expect(JSON.parse(readFileSync(target, 'utf8')).indexed_rows).toBe(10);
  });

  it('a write the disk refuses fails the index: finish throws it, the earlier index stays, nothing is left behind', async () => {
    await write(rows(10));
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...a: unknown[]) => Promise<unknown> };
    await probe.close();
    const real = proto.write;
    let calls = 0;
    // the second chunk's write fails, while the third chunk is being filled
    const spy = vi.spyOn(proto, 'write').mockImplementation(function (this: unknown, ...a: unknown[]) {
      return ++calls === 2 ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })) : real.apply(this, a);
    });
    try {
      const w = await EvidenceIndexWriter.create(target, META);
      const many = rows(3000);
      const added = (async () => {
        for (const r of many) await w.add(r);
        return w.finish(many.length);
      })();
      await expect(added).rejects.toThrow(/ENOSPC/);
      await w.abort();
    } finally {
      spy.mockRestore();
    }
    expect(readdirSync(dir).sort()).toEqual(['evidence_index.json', 'probe']);
    expect(JSON.parse(readFileSync(target, 'utf8')).indexed_rows).toBe(10);
  });

  it('refuses to read through a handle whose file another index replaced', async () => {
    const first = await write(rows(10));
    await write(rows(20));
    await expect(readEntries(first, 0, 5)).rejects.toBeInstanceOf(StaleIndexError);
    expect(existsSync(target)).toBe(true);
  });

  it('fails naming the file when it is not there', async () => {
    await expect(findEntries(target, ['x'])).rejects.toThrow(/ENOENT.*evidence_index\.json/);
  });
});
