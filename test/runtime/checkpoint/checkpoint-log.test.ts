import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CheckpointLogWriter,
  checkpointLine,
  readCheckpointFile,
  readCheckpointLog,
  repairCheckpointFile,
} from '../../../src/runtime/checkpoint/checkpoint-log.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'rt-ckpt-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('checkpoint log', () => {
  it('reads back every appended record, in order, after durable()', async () => {
    const file = join(tmp(), 'c.jsonl');
    const w = new CheckpointLogWriter<{ n: number; s: string }>(file);
    for (let n = 0; n < 50; n++) w.append({ n, s: 'é\n"x"' });
    await w.durable();
    await w.close();
    const r = readCheckpointFile<{ n: number }>(file);
    expect(r.ok && r.records.map((x) => x.n)).toEqual([...Array(50).keys()]);
    expect(r.ok && r.tornTail).toBe(false);
  });

  it('leaves out a last line cut short by a crash, keeping the records before it', () => {
    const full = checkpointLine({ a: 1 }) + checkpointLine({ a: 2 });
    const cut = full + checkpointLine({ a: 3 }).slice(0, 12);
    const r = readCheckpointLog<{ a: number }>(cut);
    expect(r).toEqual({ ok: true, records: [{ a: 1 }, { a: 2 }], tornTail: true });
  });

  it('leaves out a whole last line whose checksum does not match (a torn write of its last block)', () => {
    const bad = checkpointLine({ a: 2 }).replace('"a":2', '"a":7');
    const r = readCheckpointLog<{ a: number }>(checkpointLine({ a: 1 }) + bad);
    expect(r).toEqual({ ok: true, records: [{ a: 1 }], tornTail: true });
  });

  it('fails on a damaged line before the last one, naming the line and the checksum', () => {
    const bad = checkpointLine({ a: 2 }).replace('"a":2', '"a":7');
    const r = readCheckpointLog<{ a: number }>(checkpointLine({ a: 1 }) + bad + checkpointLine({ a: 3 }));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.line).toBe(2);
      expect(r.reason).toMatch(/checksum [0-9a-f]{8} does not match the recorded [0-9a-f]{8}/);
    }
  });

  it('fails on a line without a checksum (not a checkpoint line)', () => {
    const r = readCheckpointLog('{"a":1}\n' + checkpointLine({ a: 2 }));
    expect(r).toMatchObject({ ok: false, line: 1, reason: 'no checksum at the start of the line' });
  });

  it('masks the record before its checksum is taken, so the masked line reads back whole', async () => {
    const file = join(tmp(), 'c.jsonl');
    const w = new CheckpointLogWriter<{ key: string }>(file, (j) => j.replaceAll('sk-secret', '***'));
    w.append({ key: 'sk-secret' });
    await w.close();
    expect(readFileSync(file, 'utf8')).not.toContain('sk-secret');
    expect(readCheckpointFile(file)).toEqual({ ok: true, records: [{ key: '***' }], tornTail: false });
  });

  it('a missing file is an empty log', () => {
    expect(readCheckpointFile(join(tmp(), 'none.jsonl'))).toEqual({ ok: true, records: [], tornTail: false });
  });

  it('repair cuts a torn tail so that records appended after it (a resumed attempt) read back', async () => {
    for (const tear of [5, 1]) {
      const file = join(tmp(), 'c.jsonl');
      writeFileSync(file, checkpointLine({ a: 1 }) + checkpointLine({ a: 2 }));
      truncateSync(file, readFileSync(file).length - tear);
      expect(repairCheckpointFile(file)).toBe(true);
      expect(repairCheckpointFile(file)).toBe(false);
      const w = new CheckpointLogWriter<{ a: number }>(file);
      w.append({ a: 3 });
      await w.close();
      expect(readCheckpointFile(file)).toEqual({ ok: true, records: [{ a: 1 }, { a: 3 }], tornTail: false });
    }
  });

  it('repair reads the last line however long it is: a whole one is kept, a torn one cut at its start', () => {
    // longer than the chunks the repair reads the end of the file in, with characters of several bytes
    const big = { text: 'é€'.repeat(60_000) };
    for (const [tear, cut] of [
      [0, false],
      [1, true],
      [3, true],
      [100_000, true],
    ] as const) {
      const file = join(tmp(), 'c.jsonl');
      writeFileSync(file, checkpointLine({ a: 1 }) + checkpointLine(big));
      const whole = readFileSync(file).length;
      truncateSync(file, whole - tear);
      expect(repairCheckpointFile(file)).toBe(cut);
      expect(readFileSync(file).length).toBe(cut ? checkpointLine({ a: 1 }).length : whole);
      expect(readCheckpointFile(file)).toEqual({ ok: true, records: cut ? [{ a: 1 }] : [{ a: 1 }, big], tornTail: false });
    }
  });

  it('repair cuts a last line whose newline was written and whose checksum does not match, and nothing else', () => {
    const file = join(tmp(), 'c.jsonl');
    writeFileSync(file, checkpointLine({ a: 1 }) + checkpointLine({ a: 2 }).replace('"a":2', '"a":3'));
    expect(repairCheckpointFile(file)).toBe(true);
    expect(readCheckpointFile(file)).toEqual({ ok: true, records: [{ a: 1 }], tornTail: false });
    // a log cut to nothing, and an empty one, are left as they are
    const single = join(tmp(), 'd.jsonl');
    writeFileSync(single, checkpointLine({ a: 1 }).slice(0, 10));
    expect(repairCheckpointFile(single)).toBe(true);
    expect(readFileSync(single, 'utf8')).toBe('');
    expect(repairCheckpointFile(single)).toBe(false);
  });

  it('without the repair, a record appended after a torn tail is glued to it and lost', () => {
    const file = join(tmp(), 'c.jsonl');
    writeFileSync(file, checkpointLine({ a: 1 }) + checkpointLine({ a: 2 }).slice(0, 12));
    appendFileSync(file, checkpointLine({ a: 3 }));
    expect(readCheckpointFile(file)).toEqual({ ok: true, records: [{ a: 1 }], tornTail: true });
  });
});
