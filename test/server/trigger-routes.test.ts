/** /api/schedules over a real RunService and scheduler, in real time (a few seconds). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getJson, postJson } from './helpers.js';
import { removeDir, startStack, type Stack } from '../triggers/helpers.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  removeDir(stack?.dataDir ?? '');
  stack = null;
});

async function patch(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: r.status === 204 ? null : await r.json() };
}

describe('/api/schedules', () => {
  it('every: 2s fires on time; each run carries its trigger in its status and its events', async () => {
    stack = await startStack();
    const created = await postJson(`${stack.url}/api/schedules`, { agent: 'talk', goal: 'tick', every: '2s' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.schedule_id as string;
    expect(id).toMatch(/^sch_/);
    const firstFire = Date.parse(created.body.next_run_at);
    expect(firstFire - Date.parse(created.body.schedule.created_at)).toBe(2000);
    await vi.waitFor(
      async () =>
        expect(
          (await getJson(`${stack!.url}/api/schedules/${id}`)).body.runs.filter((f: { outcome: string }) => f.outcome === 'started').length,
        ).toBeGreaterThanOrEqual(2),
      { timeout: 15_000, interval: 200 },
    );
    const s = (await getJson(`${stack.url}/api/schedules/${id}`)).body;
    const started = s.runs.filter((f: { outcome: string }) => f.outcome === 'started').reverse();
    // fire times are the schedule's own, two seconds apart, and each run began once its fire time came
    expect(Date.parse(started[0].fire_time)).toBe(firstFire);
    expect(Date.parse(started[1].fire_time) - Date.parse(started[0].fire_time)).toBe(2000);
    const run = (await getJson(`${stack.url}/api/runs/${started[0].run_id}`)).body;
    expect(run.trigger).toEqual({ type: 'schedule', schedule_id: id, fire_time: started[0].fire_time });
    expect(Date.parse(run.created_at)).toBeGreaterThanOrEqual(firstFire);
    const events = await stack.service.events(started[0].run_id)[Symbol.asyncIterator]().next();
    expect(events.value).toMatchObject({ stream: 'run', data: { type: 'run.created', trigger: { type: 'schedule', schedule_id: id } } });
    expect(s.last_run.run_id).toBe(started.at(-1).run_id);
    expect(Date.parse(s.next_run_at)).toBeGreaterThan(Date.parse(started.at(-1).fire_time));
  });

  it('overlap: skip skips (and records it) while the slow run of the last fire is live', async () => {
    stack = await startStack();
    const created = await postJson(`${stack.url}/api/schedules`, { agent: 'talk', goal: 'work slowly wait:3500', every: '1s' });
    const id = created.body.schedule_id as string;
    await vi.waitFor(
      async () => expect((await getJson(`${stack!.url}/api/schedules/${id}`)).body.runs.some((f: { reason?: string }) => f.reason === 'overlap')).toBe(true),
      { timeout: 15_000, interval: 200 },
    );
    const s = (await getJson(`${stack.url}/api/schedules/${id}`)).body;
    const skip = s.runs.find((f: { reason?: string }) => f.reason === 'overlap');
    const live = s.runs.find((f: { run_id?: string }) => f.run_id);
    expect(skip).toMatchObject({ outcome: 'skipped' });
    expect(skip.detail).toContain(`run ${live.run_id}`);
    // never two runs of the schedule at once
    const runs = (await getJson(`${stack.url}/api/runs?limit=50`)).body.runs.filter(
      (r: { trigger?: { schedule_id: string } }) => r.trigger?.schedule_id === id,
    );
    expect(runs.filter((r: { status: string }) => !['completed', 'failed', 'cancelled'].includes(r.status)).length).toBeLessThanOrEqual(1);
  });

  it('PATCH pauses and resumes; run now starts a run at once; DELETE removes', async () => {
    stack = await startStack();
    const id = (await postJson(`${stack.url}/api/schedules`, { agent: 'talk', cron: '0 6 * * 1-5', tz: 'Europe/Berlin', goal: 'morning' })).body
      .schedule_id as string;
    const paused = await patch(`${stack.url}/api/schedules/${id}`, { enabled: false });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ enabled: false, next_run_at: null });
    const resumed = await patch(`${stack.url}/api/schedules/${id}`, { enabled: true });
    expect(resumed.body.enabled).toBe(true);
    // 06:00 in Berlin is 04:00 or 05:00 UTC
    expect(resumed.body.next_run_at).toMatch(/T0[45]:00:00\.000Z$/);
    const changed = await patch(`${stack.url}/api/schedules/${id}`, { every: '1h', goal: 'hourly' });
    expect(changed.body).toMatchObject({ every: '1h', goal: 'hourly' });
    expect(changed.body.cron).toBeUndefined();

    const now = await postJson(`${stack.url}/api/schedules/${id}/run`, {});
    expect(now.status).toBe(201);
    const run = await stack.service.wait(now.body.run_id);
    expect(run).toMatchObject({ status: 'completed', trigger: { type: 'schedule', schedule_id: id, fire_time: now.body.fire_time } });
    await vi.waitFor(async () =>
      expect((await getJson(`${stack!.url}/api/schedules/${id}`)).body.last_run).toMatchObject({
        run_id: now.body.run_id,
        manual: true,
        run_status: 'completed',
      }),
    );

    const list = (await getJson(`${stack.url}/api/schedules`)).body.schedules;
    expect(list.map((s: { schedule_id: string }) => s.schedule_id)).toEqual([id]);
    const del = await fetch(`${stack.url}/api/schedules/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect((await getJson(`${stack.url}/api/schedules/${id}`)).status).toBe(404);
    expect((await postJson(`${stack.url}/api/schedules/${id}/run`, {})).status).toBe(404);
  });

  it('bad schedules are 400s naming the field, and nothing is created', async () => {
    stack = await startStack({ config: { webhooks: { allow: ['https://hooks.example.com/*'] } } });
    const cases: Array<[unknown, string]> = [
      [{ agent: 'talk', cron: '99 * * * *' }, 'cron'],
      [{ agent: 'talk', cron: '0 6 * * *', tz: 'Europe/Atlantis' }, 'tz'],
      [{ agent: 'talk', every: '999ms' }, 'every'],
      [{ agent: 'nobody', every: '1h' }, 'agent'],
      [{ agent: 'talk', every: '1h', webhook: { url: 'gopher://hooks.example.com/x' } }, 'webhook.url'],
      [{ agent: 'talk', every: '1h', webhook: { url: 'https://other.example.com/x' } }, 'webhook.url'],
      [{ agent: 'talk', every: '1h', webhook: { url: 'https://hooks.example.com/x', secret: 'whsec_!!' } }, 'webhook.secret'],
      [{ agent: 'talk', every: '1h', input: { topic: 7 } }, 'input.topic'],
      [JSON.stringify('every hour'), '(body)'],
    ];
    for (const [body, path] of cases) {
      const r = await postJson(`${stack.url}/api/schedules`, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
      expect(r.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
      expect(r.body.error.message).toContain(path);
    }
    expect((await getJson(`${stack.url}/api/schedules`)).body.schedules).toEqual([]);
    // a bad change leaves the schedule as it was
    const id = (await postJson(`${stack.url}/api/schedules`, { agent: 'talk', every: '1h' })).body.schedule_id;
    const bad = await patch(`${stack.url}/api/schedules/${id}`, { every: '10ms' });
    expect(bad.status).toBe(400);
    expect((await getJson(`${stack.url}/api/schedules/${id}`)).body.every).toBe('1h');
  });

  it('a schedule webhook is kept without its secret in what the API shows', async () => {
    stack = await startStack();
    const secret = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
    const r = await postJson(`${stack.url}/api/schedules`, { agent: 'talk', every: '1h', webhook: { url: 'https://hooks.example.com/x?token=abc', secret } });
    expect(r.body.schedule.webhook).toEqual({ url: 'https://hooks.example.com/x?…', signed: true });
    expect(JSON.stringify((await getJson(`${stack.url}/api/schedules`)).body)).not.toContain(secret.slice(6));
  });
});
