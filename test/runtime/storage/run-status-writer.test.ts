import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PublicDocument, RunStatusFile } from '../../../src/runtime/run-service-types.js';
import { RunStatusWriter, STATUS_FOLD_MS } from '../../../src/runtime/storage/run-status-writer.js';

const report: PublicDocument = {
  path: 'artifacts/report.md',
  audience: 'user',
  sensitivity: 'internal',
  type: 'markdown',
  description: 'the report',
  bytes: 12,
};

function status(): RunStatusFile {
  return {
    run_id: 'run_1',
    status: 'queued',
    plugin: 'notes',
    plugin_version: '0.1.0',
    skill: null,
    goal: 'g',
    conversation_id: 'c',
    provider: 'fake',
    model: 'fake-1',
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    final_answer: '',
    diagnosis: null,
    last_seq: 0,
    public_documents: [report],
  };
}

describe('RunStatusWriter', () => {
  it('changes the shared record in place; only save, and the changes that say so, write it', async () => {
    const written: RunStatusFile[] = [];
    const record = status();
    const w = new RunStatusWriter(record, async (s) => void written.push({ ...s }));
    w.moved('created', 4);
    w.started('2026-01-01T00:00:01.000Z');
    // the record readers hold sees the change at once, nothing is written yet
    expect(w.current).toBe(record);
    expect(record).toMatchObject({ status: 'created', last_seq: 4, started_at: '2026-01-01T00:00:01.000Z' });
    expect(written).toEqual([]);
    await w.save();
    expect(written.map((s) => [s.status, s.last_seq])).toEqual([['created', 4]]);
    // a resumed attempt keeps the first start
    w.started('2026-01-02T00:00:00.000Z');
    expect(record.started_at).toBe('2026-01-01T00:00:01.000Z');
    // subagents are written at once, as a copy of the list the caller keeps growing
    const children = ['run_2'];
    await w.children(children);
    children.push('run_3');
    expect(written.at(-1)?.children).toEqual(['run_2']);
    expect(record.children).toEqual(['run_2']);
  });

  it('ends the run: terminal fields set, the listed documents kept unless new ones are given, the key order of the file unchanged', () => {
    const record = status();
    const w = new RunStatusWriter(record, async () => {});
    const keys = Object.keys(record);
    w.ended({ status: 'failed', finished_at: '2026-01-01T00:01:00.000Z', final_answer: 'partial', diagnosis: null, last_seq: 9 });
    expect(record).toMatchObject({ status: 'failed', final_answer: 'partial', last_seq: 9, public_documents: [report] });
    w.ended({ status: 'completed', finished_at: '2026-01-01T00:02:00.000Z', final_answer: 'done', diagnosis: null, last_seq: 12, public_documents: [] });
    expect(record.public_documents).toEqual([]);
    expect(Object.keys(record)).toEqual(keys);
  });

  it('a failed write rejects save, and the record keeps the change for the next write', async () => {
    const record = status();
    let fail = true;
    const written: string[] = [];
    const w = new RunStatusWriter(record, async (s) => {
      if (fail) throw new Error('disk full');
      written.push(s.status);
    });
    w.moved('planning', 6);
    await expect(w.save()).rejects.toThrow('disk full');
    fail = false;
    await w.save();
    expect(written).toEqual(['planning']);
  });
});

describe('RunStatusWriter state changes', () => {
  afterEach(() => void vi.useRealTimers());

  /** A writer whose record has gone through a first turn, and the statuses it wrote since. */
  function running() {
    vi.useFakeTimers();
    const written: string[] = [];
    const record = status();
    record.status = 'model_thinking';
    const w = new RunStatusWriter(record, async (s) => void written.push(s.status));
    const move = (from: RunStatusFile['status'], to: RunStatusFile['status']) => {
      w.moved(to, 0);
      w.stateChanged(from, to);
    };
    return { w, written, move };
  }

  it('folds the back and forth of model turns and tool calls by time: one write per fold window, the newest state', () => {
    const { written, move } = running();
    for (let i = 0; i < 200; i++) {
      move('model_thinking', 'tool_executing');
      move('tool_executing', 'model_thinking');
    }
    move('model_thinking', 'tool_executing');
    expect(written).toEqual([]);
    vi.advanceTimersByTime(STATUS_FOLD_MS);
    expect(written).toEqual(['tool_executing']);
    move('tool_executing', 'model_thinking');
    vi.advanceTimersByTime(STATUS_FOLD_MS);
    expect(written).toEqual(['tool_executing', 'model_thinking']);
  });

  it('writes at once what a reader must see: waiting for a person, validating, the first states', () => {
    const { written, move } = running();
    move('model_thinking', 'tool_executing');
    move('tool_executing', 'awaiting_approval');
    expect(written).toEqual(['awaiting_approval']);
    move('awaiting_approval', 'tool_executing');
    expect(written).toEqual(['awaiting_approval', 'tool_executing']);
    move('tool_executing', 'model_thinking');
    move('model_thinking', 'validating');
    expect(written).toEqual(['awaiting_approval', 'tool_executing', 'validating']);
    // the folded write that waited was part of the one made at once
    vi.advanceTimersByTime(STATUS_FOLD_MS);
    expect(written).toHaveLength(3);
  });

  it('settle writes a folded change now; a run that ended drops it (its status goes with its final files)', async () => {
    const { w, written, move } = running();
    move('model_thinking', 'tool_executing');
    await w.settle();
    expect(written).toEqual(['tool_executing']);
    await w.settle();
    expect(written).toHaveLength(1);
    move('tool_executing', 'model_thinking');
    w.dropFolded();
    vi.advanceTimersByTime(STATUS_FOLD_MS * 2);
    expect(written).toHaveLength(1);
  });
});
