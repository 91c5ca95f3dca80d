/**
 * What earlier evidence lookups found in an index file that has not changed since: the checks at
 * write time (one per JSON artifact) and the two stop validators cite mostly the same rows, and each
 * lookup was a scan of the index on disk (a 10,000-row index: ~3 ms each, four a run). The file's
 * identity (inode, size, mtime) decides whether it is the same file; an id the index lacks is
 * remembered only after a scan that read the whole file without finding it. The index's writer
 * may tell it what the file it just wrote holds (`remember`): a small file's every row, a large
 * one's cited rows.
 */
import type { Stats } from 'node:fs';

interface IndexMemo {
  ino: number;
  size: number;
  mtimeMs: number;
  texts: Map<string, string>;
  absent: Set<string>;
  /** every id of the file is in `texts`: one that is not is absent, with no scan */
  complete: boolean;
  /** characters of the texts held */
  chars: number;
}

export type IndexIdentity = Pick<Stats, 'ino' | 'size' | 'mtimeMs'>;

/** Index files remembered at most (one per run that checks evidence; the newest kept). */
const MAX_FILES = 16;
/** Text characters remembered at most over all files (a long-lived server must not keep every run's rows). */
export const MAX_REMEMBERED_CHARS = 8 * 1024 * 1024;

export class EvidenceLookupMemo {
  private readonly files = new Map<string, IndexMemo>();

  /** The memo of `path` as `st` finds it (a new one when the file changed). */
  private memoOf(path: string, st: IndexIdentity): IndexMemo {
    let m = this.files.get(path);
    if (!m || m.ino !== st.ino || m.size !== st.size || m.mtimeMs !== st.mtimeMs) {
      m = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, texts: new Map(), absent: new Set(), complete: false, chars: 0 };
    }
    // the newest last: the oldest goes first when there are too many
    this.files.delete(path);
    this.files.set(path, m);
    if (this.files.size > MAX_FILES) this.files.delete(this.files.keys().next().value as string);
    return m;
  }

  private add(m: IndexMemo, id: string, text: string): void {
    if (!m.texts.has(id)) m.chars += text.length;
    m.texts.set(id, text);
  }

  /** The oldest files go while the texts held are over the budget; the newest (`keep`) stays. */
  private trim(keep: IndexMemo): void {
    let total = 0;
    for (const m of this.files.values()) total += m.chars;
    for (const [path, m] of this.files) {
      if (total <= MAX_REMEMBERED_CHARS || m === keep) break;
      this.files.delete(path);
      total -= m.chars;
    }
  }

  /**
   * What the index's writer knows it wrote to the file it just finished (`st`): some rows, or all
   * of them (`complete`). Lookups of that same file then read nothing for those ids.
   */
  remember(path: string, st: IndexIdentity, texts: ReadonlyArray<[string, string]>, complete: boolean): void {
    let chars = 0;
    for (const [, text] of texts) chars += text.length;
    // rows beyond the budget are not held: the file is then scanned as if never remembered
    if (chars > MAX_REMEMBERED_CHARS) return;
    const m = this.memoOf(path, st);
    for (const [id, text] of texts) this.add(m, id, text);
    if (complete) m.complete = true;
    this.trim(m);
  }

  /**
   * id → text for `ids`, scanning the file (through `find`, given the ids not known yet) only for
   * what earlier lookups of the same file did not settle.
   */
  async lookup(path: string, st: IndexIdentity, ids: Iterable<string>, find: (ids: string[]) => Promise<Map<string, string>>): Promise<Map<string, string>> {
    const m = this.memoOf(path, st);
    const want = [...new Set(ids)];
    const unknown = m.complete ? [] : want.filter((id) => !m.texts.has(id) && !m.absent.has(id));
    if (unknown.length > 0) {
      const found = await find(unknown);
      // the scan stops once every id is found; one that was not found was looked for in all of it
      for (const id of unknown) {
        const text = found.get(id);
        if (text !== undefined) this.add(m, id, text);
        else m.absent.add(id);
      }
      this.trim(m);
    }
    const out = new Map<string, string>();
    for (const id of want) {
      const text = m.texts.get(id);
      if (text !== undefined) out.set(id, text);
    }
    return out;
  }
}
