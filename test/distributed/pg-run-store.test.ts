/** The PostgreSQL store's run list: filters read in one query. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/distributed/pg-run-store.js';
import { EventStore } from '../../src/runtime/storage/event-store.js';
import type { RunStatusFile } from '../../src/runtime/run-service-types.js';
import { RunWorkspace } from '../../src/runtime/storage/run-workspace.js';
import { PG_URL, removeIsolation, servicesDown, uniqueName } from './cluster-helpers.js';

const down = await servicesDown();

function status(runId: string, s: RunStatusFile['status']): RunStatusFile {
  return {
    run_id: runId,
    status: s,
    plugin: 'chat',
    plugin_version: '1',
    skill: null,
    goal: 'g',
    conversation_id: 'c1',
    provider: 'offline',
    model: 'offline',
    created_at: new Date().toISOString(),
    started_at: null,
    finished_at: null,
    final_answer: '',
    diagnosis: null,
    last_seq: 0,
    public_documents: [],
    trace_id: '',
  };
}

describe.skipIf(down !== null)('PgRunStore.list', () => {
  it('lists the runs in any of several statuses, newest first, with their total', async () => {
    const schema = uniqueName('list');
    const dir = mkdtempSync(join(tmpdir(), 'runtrail-pg-list-'));
    const store = await PgRunStore.connect({ url: PG_URL, schema, fileLog: (_id, root) => new EventStore(join(root, 'runtime', 'events.jsonl')) });
    try {
      const runs = ['run_20260101_000000_000001', 'run_20260101_000000_000002', 'run_20260101_000000_000003'];
      const states = ['queued', 'completed', 'model_thinking'] as const;
      for (const [i, id] of runs.entries()) {
        const ws = new RunWorkspace(dir, id);
        await ws.createDirs();
        await store.save(status(id, states[i]), ws);
      }
      const live = await store.list({ statuses: ['queued', 'created', 'model_thinking'] });
      expect(live.runs.map((r) => [r.run_id, r.status])).toEqual([
        [runs[2], 'model_thinking'],
        [runs[0], 'queued'],
      ]);
      expect(live.total).toBe(2);
      expect((await store.list({ statuses: ['completed'], limit: 1 })).runs.map((r) => r.run_id)).toEqual([runs[1]]);
      // by model (provider:model or the name alone), by words of the goal (LIKE's characters taken literally), by conversation
      const other = {
        ...status('run_20260101_000000_000004', 'failed'),
        provider: 'openai',
        model: 'gpt-4o-mini',
        goal: 'Find 100% of the SYNC issues',
        conversation_id: 'c2',
      };
      const ws = new RunWorkspace(dir, other.run_id);
      await ws.createDirs();
      await store.save(other, ws);
      const ids = async (q: Parameters<typeof store.list>[0]) => (await store.list(q)).runs.map((r) => r.run_id);
      expect(await ids({ model: 'openai:gpt-4o-mini' })).toEqual([other.run_id]);
      expect(await ids({ model: 'gpt-4o-mini' })).toEqual([other.run_id]);
      expect(await ids({ goal: 'sync iss' })).toEqual([other.run_id]);
      expect(await ids({ goal: '100%' })).toEqual([other.run_id]);
      expect(await ids({ goal: '1_0' })).toEqual([]);
      expect(await ids({ conversation: 'c2' })).toEqual([other.run_id]);
      expect((await store.list({ conversation: 'c1' })).total).toBe(3);
    } finally {
      await store.close();
      await removeIsolation(schema, `${schema}:`);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
