/**
 * What earlier evidence lookups found in an index file that has not changed since: the checks at
 * write time (one per JSON artifact) and the two stop validators cite mostly the same rows, and each
 * lookup was a scan of the index on disk (a 10,000-row index: ~3 ms each, four a run). The file's
 * identity (inode, size, mtime) decides whether it is the same file; an id the index lacks is
 * remembered only after a scan that read the whole file without finding it.
 */
import type { Stats } from 'node:fs';

interface IndexMemo {
  ino: number;
  size: number;
  mtimeMs: number;
  texts: Map<string, string>;
  absent: Set<string>;
}

/** Index files remembered at most (one per run that checks evidence; the newest kept). */
const MAX_FILES = 16;

export class EvidenceLookupMemo {
  private readonly files = new Map<string, IndexMemo>();

  /** The memo of `path` as `st` finds it (a new one when the file changed). */
  private memoOf(path: string, st: Pick<Stats, 'ino' | 'size' | 'mtimeMs'>): IndexMemo {
    let m = this.files.get(path);
    if (!m || m.ino !== st.ino || m.size !== st.size || m.mtimeMs !== st.mtimeMs) {
      m = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, texts: new Map(), absent: new Set() };
    }
    // the newest last: the oldest goes first when there are too many
    this.files.delete(path);
    this.files.set(path, m);
    if (this.files.size > MAX_FILES) this.files.delete(this.files.keys().next().value as string);
    return m;
  }

  /**
   * id → text for `ids`, scanning the file (through `find`, given the ids not known yet) only for
   * what earlier lookups of the same file did not settle.
   */
  async lookup(
    path: string,
    st: Pick<Stats, 'ino' | 'size' | 'mtimeMs'>,
    ids: Iterable<string>,
    find: (ids: string[]) => Promise<Map<string, string>>,
  ): Promise<Map<string, string>> {
    const m = this.memoOf(path, st);
    const want = [...new Set(ids)];
    const unknown = want.filter((id) => !m.texts.has(id) && !m.absent.has(id));
    if (unknown.length > 0) {
      const found = await find(unknown);
      // the scan stops once every id is found; one that was not found was looked for in all of it
      for (const id of unknown) {
        const text = found.get(id);
        if (text !== undefined) m.texts.set(id, text);
        else m.absent.add(id);
      }
    }
    const out = new Map<string, string>();
    for (const id of want) {
      const text = m.texts.get(id);
      if (text !== undefined) out.set(id, text);
    }
    return out;
  }
}
