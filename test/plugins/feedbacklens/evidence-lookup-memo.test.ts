import { describe, expect, it } from 'vitest';
import { EvidenceLookupMemo, MAX_REMEMBERED_CHARS } from '../../../src/plugins/feedbacklens/evidence-lookup-memo.js';

const file = { ino: 7, size: 1_000, mtimeMs: 1_796_000_000_000 };
const rows = new Map([
  ['FB-1', 'sync fails'],
  ['FB-2', 'export cuts pages'],
  ['FB-3', 'love the calendar'],
]);

/** A scan of `rows` that records which ids it was asked for. */
function scanner(source = rows) {
  const asked: string[][] = [];
  const find = async (ids: string[]) => {
    asked.push(ids);
    return new Map(ids.filter((id) => source.has(id)).map((id) => [id, source.get(id)!]));
  };
  return { asked, find };
}

describe('EvidenceLookupMemo', () => {
  it('scans only for ids no earlier lookup of the same file settled', async () => {
    const memo = new EvidenceLookupMemo();
    const s = scanner();
    expect(await memo.lookup('/run/index.json', file, ['FB-1', 'FB-2'], s.find)).toEqual(
      new Map([
        ['FB-1', 'sync fails'],
        ['FB-2', 'export cuts pages'],
      ]),
    );
    expect(await memo.lookup('/run/index.json', file, ['FB-2', 'FB-1', 'FB-1'], s.find)).toEqual(
      new Map([
        ['FB-2', 'export cuts pages'],
        ['FB-1', 'sync fails'],
      ]),
    );
    expect(await memo.lookup('/run/index.json', file, ['FB-3', 'FB-1'], s.find)).toEqual(
      new Map([
        ['FB-3', 'love the calendar'],
        ['FB-1', 'sync fails'],
      ]),
    );
    expect(s.asked).toEqual([['FB-1', 'FB-2'], ['FB-3']]);
  });

  it('an id the index lacks stays absent without another scan', async () => {
    const memo = new EvidenceLookupMemo();
    const s = scanner();
    expect(await memo.lookup('/run/index.json', file, ['FB-9', 'FB-1'], s.find)).toEqual(new Map([['FB-1', 'sync fails']]));
    expect(await memo.lookup('/run/index.json', file, ['FB-9'], s.find)).toEqual(new Map());
    expect(s.asked).toEqual([['FB-9', 'FB-1']]);
  });

  it('a file that changed (inode, size or mtime) is scanned again and its new texts returned', async () => {
    const memo = new EvidenceLookupMemo();
    await memo.lookup('/run/index.json', file, ['FB-1'], scanner().find);
    const rewritten = new Map([['FB-1', 'sync works now']]);
    for (const changed of [
      { ...file, ino: 8 },
      { ...file, size: 999 },
      { ...file, mtimeMs: file.mtimeMs + 1 },
    ]) {
      const s = scanner(rewritten);
      expect(await memo.lookup('/run/index.json', changed, ['FB-1'], s.find)).toEqual(new Map([['FB-1', 'sync works now']]));
      expect(s.asked).toEqual([['FB-1']]);
    }
  });

  it('a file its writer remembered whole is never scanned: its ids are found, any other is absent', async () => {
    const memo = new EvidenceLookupMemo();
    memo.remember('/run/index.json', file, [...rows], true);
    const s = scanner();
    expect(await memo.lookup('/run/index.json', file, ['FB-3', 'FB-9'], s.find)).toEqual(new Map([['FB-3', 'love the calendar']]));
    expect(s.asked).toEqual([]);
    // the same path rewritten since: what the writer remembered says nothing about it
    const rewritten = scanner(new Map([['FB-9', 'new row']]));
    expect(await memo.lookup('/run/index.json', { ...file, mtimeMs: file.mtimeMs + 5 }, ['FB-3', 'FB-9'], rewritten.find)).toEqual(
      new Map([['FB-9', 'new row']]),
    );
    expect(rewritten.asked).toEqual([['FB-3', 'FB-9']]);
  });

  it('holds no more text than its budget: the oldest file goes first, and rows over the budget are not held', async () => {
    const memo = new EvidenceLookupMemo();
    const half = (id: string): Array<[string, string]> => [[id, 'x'.repeat(MAX_REMEMBERED_CHARS / 2)]];
    memo.remember('/a/index.json', file, half('FB-A'), true);
    memo.remember('/b/index.json', file, half('FB-B'), true);
    memo.remember('/c/index.json', file, half('FB-C'), true);
    const a = scanner(new Map([['FB-A', 'a']]));
    expect(await memo.lookup('/a/index.json', file, ['FB-A'], a.find)).toEqual(new Map([['FB-A', 'a']]));
    expect(a.asked).toEqual([['FB-A']]);
    const c = scanner();
    expect((await memo.lookup('/c/index.json', file, ['FB-C'], c.find)).get('FB-C')).toHaveLength(MAX_REMEMBERED_CHARS / 2);
    expect(c.asked).toEqual([]);
    memo.remember('/d/index.json', file, [['FB-D', 'x'.repeat(MAX_REMEMBERED_CHARS + 1)]], true);
    const d = scanner(new Map([['FB-D', 'd']]));
    expect(await memo.lookup('/d/index.json', file, ['FB-D'], d.find)).toEqual(new Map([['FB-D', 'd']]));
    expect(d.asked).toEqual([['FB-D']]);
  });

  it('rows remembered in part are served from memory; the others are still looked for in the file', async () => {
    const memo = new EvidenceLookupMemo();
    memo.remember('/run/index.json', file, [['FB-2', 'export cuts pages']], false);
    const s = scanner();
    expect(await memo.lookup('/run/index.json', file, ['FB-2', 'FB-1', 'FB-9'], s.find)).toEqual(
      new Map([
        ['FB-2', 'export cuts pages'],
        ['FB-1', 'sync fails'],
      ]),
    );
    expect(s.asked).toEqual([['FB-1', 'FB-9']]);
  });

  it('files are kept apart, and only the newest sixteen are remembered', async () => {
    const memo = new EvidenceLookupMemo();
    for (let i = 0; i < 17; i++) await memo.lookup(`/run${i}/index.json`, file, ['FB-1'], scanner().find);
    const newest = scanner();
    await memo.lookup('/run16/index.json', file, ['FB-1'], newest.find);
    expect(newest.asked).toEqual([]);
    const oldest = scanner();
    await memo.lookup('/run0/index.json', file, ['FB-1'], oldest.find);
    expect(oldest.asked).toEqual([['FB-1']]);
  });
});
