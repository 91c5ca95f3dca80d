/**
 * The PostgreSQL stores of several nodes (the real database on loopback, a schema of this test's own):
 * a fire time claimed by many nodes at once goes to one; a webhook message is leased to one node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPgTriggerStores } from '../../src/triggers/pg-trigger-store.js';
import type { Schedule, WebhookMessage } from '../../src/triggers/types.js';
import { PG_URL, removeIsolation, servicesDown, uniqueName } from '../distributed/cluster-helpers.js';

const down = await servicesDown();
const schema = uniqueName('trig');
type Stores = Awaited<ReturnType<typeof connectPgTriggerStores>>;
const nodes: Stores[] = [];

beforeAll(async () => {
  if (down) return;
  for (let i = 0; i < 3; i++) nodes.push(await connectPgTriggerStores({ url: PG_URL, schema }));
});
afterAll(async () => {
  for (const n of nodes) await n.schedules.close();
  if (!down) await removeIsolation(schema, schema);
});

const T0 = '2030-01-01T00:00:00.000Z';
const schedule = (id: string): Schedule => ({
  agent: 'talk',
  input: {},
  every: '1m',
  tz: 'UTC',
  overlap: 'skip',
  missed: 'run_once',
  enabled: true,
  schedule_id: id,
  source: { kind: 'api' },
  created_at: T0,
  updated_at: T0,
  version: 1,
  due_after: T0,
  failures: 0,
  backoff_until: null,
  fires: [],
});

describe.skipIf(down)('PostgreSQL trigger stores', () => {
  it('each fire time is claimed by exactly one of the nodes claiming it at once; a paused or changed schedule by none', async () => {
    await nodes[0].schedules.put(schedule('s1'));
    for (let m = 1; m <= 5; m++) {
      const fire = `2030-01-01T00:0${m}:00.000Z`;
      const wins = await Promise.all(nodes.flatMap((n) => [n.schedules.claim('s1', fire, 1, false, fire), n.schedules.claim('s1', fire, 1, false, fire)]));
      expect(wins.filter(Boolean)).toHaveLength(1);
    }
    const s = await nodes[1].schedules.get('s1');
    expect(s!.due_after).toBe('2030-01-01T00:05:00.000Z');
    expect(s!.fires.map((f) => f.fire_time)).toEqual([5, 4, 3, 2, 1].map((m) => `2030-01-01T00:0${m}:00.000Z`));
    // an older fire time, a stale version, a paused schedule: nobody
    expect(await nodes[2].schedules.claim('s1', '2030-01-01T00:04:30.000Z', 1, false, T0)).toBeNull();
    expect(await nodes[2].schedules.claim('s1', '2030-01-01T00:06:00.000Z', 0, false, T0)).toBeNull();
    await nodes[0].schedules.put({ ...(await nodes[0].schedules.get('s1'))!, enabled: false, version: 2 });
    expect(await nodes[2].schedules.claim('s1', '2030-01-01T00:06:00.000Z', 2, false, T0)).toBeNull();
    // a fire by hand does not need the schedule enabled; the claimer gets the schedule with its fire
    const byHand = await nodes[2].schedules.claim('s1', '2030-01-01T00:06:30.000Z', 2, true, T0);
    expect(byHand?.fires[0]).toMatchObject({ fire_time: '2030-01-01T00:06:30.000Z', outcome: 'waiting', manual: true });
    const stamp = await nodes[1].schedules.stamp();
    await nodes[0].schedules.setState('s1', { failures: 2, backoff_until: '2030-01-01T01:00:00.000Z' });
    expect(await nodes[1].schedules.stamp()).not.toBe(stamp);
    expect(await nodes[1].schedules.get('s1')).toMatchObject({ failures: 2, backoff_until: '2030-01-01T01:00:00.000Z' });
    expect(await nodes[1].schedules.remove('s1')).toBe(true);
    expect(await nodes[1].schedules.list()).toEqual([]);
  });

  it('a run event is reported once; a due message is leased to one node until its lease runs out or the node hands it back', async () => {
    const w = nodes.map((n) => n.webhooks);
    await w[0].register('run_a', [{ url: 'https://example.com/h', source: 'run' }]);
    await w[1].register('run_a', [{ url: 'https://other.example.com/h', source: 'run' }]);
    expect((await w[2].get('run_a'))!.targets).toEqual([{ url: 'https://example.com/h', source: 'run' }]);
    expect(await w[2].openRuns()).toContain('run_a');
    const msg = (owner: string): WebhookMessage => ({
      webhook_id: 'msg_a',
      run_id: 'run_a',
      type: 'run.completed',
      target: 0,
      body: '{}',
      created_at: T0,
      attempts: 0,
      state: 'pending',
      next_attempt_at: 1000,
      give_up_at: 99_000,
      lease_owner: owner,
      lease_until: 5000,
    });
    const reports = await Promise.all(w.map((x, i) => x.report('run_a', 'end', [msg(`n${i}`)], true)));
    expect(reports.filter((r) => r.length === 1)).toHaveLength(1);
    expect(await w[2].openRuns()).not.toContain('run_a');
    // the lease of the node that reported it holds until 5000
    expect((await Promise.all(w.map((x, i) => x.lease(`other${i}`, 2000, 20_000, 10, 4000)))).flat()).toEqual([]);
    // ... unless that node stopped and handed its messages back
    const reporter = reports.findIndex((r) => r.length === 1);
    await w[(reporter + 1) % 3].release('a-node-holding-nothing');
    expect((await w[2].lease('other2', 2000, 20_000, 10, 4000)).length).toBe(0);
    await w[(reporter + 1) % 3].release(`n${reporter}`);
    const early = await w[2].lease('early', 2000, 4500, 10, 4000);
    expect(early).toEqual([expect.objectContaining({ webhook_id: 'msg_a', lease_owner: 'early', lease_until: 4500 })]);
    const leased = (await Promise.all(w.map((x, i) => x.lease(`other${i}`, 2000, 20_000, 10, 6000)))).flat();
    expect(leased).toHaveLength(1);
    expect(leased[0]).toMatchObject({ webhook_id: 'msg_a', lease_until: 20_000 });
    await w[0].save({ ...leased[0], state: 'delivered', attempts: 1, next_attempt_at: null });
    expect((await w[1].get('run_a'))!.messages).toEqual([expect.objectContaining({ state: 'delivered', attempts: 1 })]);
  });
});
