/**
 * Checkpoints in PostgreSQL: the records of each burst committed in order (a reader gets a whole
 * prefix, a record folded by appendLast once), a damaged row found as a damaged line would be, and
 * the claim that lets exactly one node take up each attempt of a run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/distributed/pg-run-store.js';
import { checkpointsInLines } from '../../src/runtime/checkpoint/checkpoint-store.js';
import { EventStore } from '../../src/runtime/storage/event-store.js';
import type { CheckpointRecord } from '../../src/runtime/checkpoint/checkpoint-records.js';
import { resumePointOf } from '../../src/runtime/checkpoint/resume-point.js';
import type { RunStatusFile } from '../../src/runtime/run-service-types.js';
import { RunWorkspace } from '../../src/runtime/storage/run-workspace.js';
import { PG_URL, removeIsolation, servicesDown, uniqueName } from './cluster-helpers.js';

const down = await servicesDown();

const message = (text: string, at: number): CheckpointRecord => ({ k: 'message', id: text, mode: 'steer', text, from: 'api', seq: at, at, usedMs: 0 });

async function withStore(f: (store: PgRunStore, schema: string, dir: string) => Promise<void>): Promise<void> {
  const schema = uniqueName('cp');
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-pg-cp-'));
  const store = await PgRunStore.connect({ url: PG_URL, schema, fileLog: (_id, root) => new EventStore(join(root, 'runtime', 'events.jsonl')) });
  try {
    await f(store, schema, dir);
  } finally {
    await store.close();
    await removeIsolation(schema, uniqueName('none'));
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(down !== null)('PgCheckpointStore', () => {
  it('commits the bursts in the order appended; a folded record once; durable() resolves once all are read back', async () => {
    await withStore(async (store) => {
      const cps = checkpointsInLines(store.checkpoints);
      const log = cps.open('run_a', '', { resumed: false });
      log.append(message('one', 1));
      log.append(message('two', 2));
      await Promise.resolve();
      log.append(message('three', 3));
      // folded: only the last of these is made
      log.appendLast(() => message('draft', 4));
      log.appendLast(() => message('four', 4));
      log.append(message('five', 5));
      await log.durable();
      const read = await cps.read('run_a', '');
      expect(read.ok).toBe(true);
      if (!read.ok) return;
      expect(read.records.map((r) => (r as { text: string }).text)).toEqual(['one', 'two', 'three', 'four', 'five']);
      // another run's records are its own
      expect(await cps.read('run_b', '')).toEqual({ ok: true, records: [], tornTail: false });
      await log.close();
    });
  });

  it('finds a damaged row, naming where, so a resume falls back to interrupted instead of a wrong conversation', async () => {
    await withStore(async (store, schema) => {
      const cps = checkpointsInLines(store.checkpoints);
      const log = cps.open('run_d', '', { resumed: false });
      for (let i = 1; i <= 3; i++) log.append(message(`m${i}`, i));
      await log.close();
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(
          `UPDATE "${schema}".runtrail_checkpoints SET line = replace(line, '"m2"', '"mX"') WHERE id = (SELECT min(id) + 1 FROM "${schema}".runtrail_checkpoints WHERE run_id = 'run_d')`,
        );
      } finally {
        await c.end();
      }
      const read = await cps.read('run_d', '');
      expect(read).toMatchObject({ ok: false, line: 2 });
      const loaded = resumePointOf(read, cps.where('run_d', ''));
      expect(loaded).toMatchObject({ ok: false, code: 'checkpoint_corrupt' });
      expect(loaded.ok ? '' : loaded.detail).toContain('runtrail_checkpoints');
    });
  });

  it('claimResume: one node takes up each attempt, none takes up an ended run', async () => {
    await withStore(async (store, _schema, dir) => {
      const s = {
        run_id: 'run_c',
        status: 'tool_executing',
        plugin: 'chat',
        conversation_id: 'c',
        goal: 'g',
        last_seq: 0,
      } as unknown as RunStatusFile;
      await store.save(s, new RunWorkspace(dir, 'run_c'));
      const first = await Promise.all([store.claimResume('run_c', 1), store.claimResume('run_c', 1), store.claimResume('run_c', 1)]);
      expect(first.filter(Boolean)).toHaveLength(1);
      expect(await store.claimResume('run_c', 1)).toBe(false);
      expect(await store.claimResume('run_c', 2)).toBe(true);
      expect(await store.claimTerminal({ ...s, status: 'failed' })).toBe(true);
      expect(await store.claimResume('run_c', 3)).toBe(false);
    });
  });
});
