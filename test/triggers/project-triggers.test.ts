/**
 * Schedules of a project are checked at creation as a run request is: a file input outside the
 * input roots of the service that fires them (the data dir's uploads) is refused by the API (400
 * input_outside_roots, as POST /api/runs answers) and by the CLI (exit 2, naming the field), never
 * accepted to fail at every fire.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { projectTriggers } from '../../src/triggers/project-triggers.js';
import type { TriggerHost } from '../../src/triggers/trigger-host.js';
import { getJson, postJson } from '../server/helpers.js';
import { SMALL_FEEDBACK_CSV } from '../fixtures/small-feedback-csv.js';
import { Sink } from '../cli/sink.js';

const plugin = { ...createFeedbackLensPlugin(), defaultSkill: null };
let dir = '';
let outside = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'project-triggers-'));
  outside = join(dir, 'elsewhere.csv');
  writeFileSync(outside, SMALL_FEEDBACK_CSV);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a schedule is checked at creation as a run request is', () => {
  let service: RunService | null = null;
  let triggers: TriggerHost | null = null;
  let server: RunningServer | null = null;
  afterEach(async () => {
    await triggers?.stop();
    await server?.close();
    await service?.close();
    service = triggers = server = null;
  });

  it('the API refuses a file input outside the input roots with the answer POST /api/runs gives; one inside is taken', async () => {
    const dataDir = join(dir, 'data');
    const registry = {
      projectDir: dir,
      entries: () => [],
      names: () => ['feedbacklens'],
      get: (n: string) => (n === 'feedbacklens' ? plugin : undefined),
      config: {},
    };
    triggers = projectTriggers(() => registry as any, { dataDir, cwd: dir });
    service = new RunService({ dataDir, agents: [plugin], env: {}, observers: [triggers.observer] });
    await service.init();
    await triggers.start(service);
    server = await startServer({ service, port: 0, dataDir, env: {}, triggers });

    const input = { csv_path: outside, product_name: 'X' };
    const run = await postJson(`${server.url}/api/runs`, { plugin: 'feedbacklens', input });
    expect(run.status).toBe(400);
    expect(run.body.error.code).toBe('input_outside_roots');
    const schedule = await postJson(`${server.url}/api/schedules`, { agent: 'feedbacklens', every: '1h', input });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(400);
    expect(schedule.body.error.code).toBe('input_outside_roots');
    expect(schedule.body.error.details.issues[0]).toMatchObject({ path: 'input.csv_path' });
    expect(schedule.body.error.details.issues[0].message).toContain(`${outside} is outside the input roots (${join(dataDir, 'uploads')})`);
    expect((await getJson(`${server.url}/api/schedules`)).body.schedules).toEqual([]);

    // a file under uploads is what a run would take, and so is a schedule
    mkdirSync(join(dataDir, 'uploads'), { recursive: true });
    const inside = join(dataDir, 'uploads', 'feedback.csv');
    writeFileSync(inside, SMALL_FEEDBACK_CSV);
    const good = await postJson(`${server.url}/api/schedules`, { agent: 'feedbacklens', every: '1h', input: { csv_path: inside, product_name: 'X' } });
    expect(good.status, JSON.stringify(good.body)).toBe(201);
    // and a change of its input is checked the same way
    const r = await fetch(`${server.url}/api/schedules/${good.body.schedule_id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error.code).toBe('input_outside_roots');
  });

  it('the CLI refuses it too (exit 2, naming the field and the roots), and adds nothing', async () => {
    const cli = async (args: string[]) => {
      const stdout = new Sink();
      const stderr = new Sink();
      const deps: CliDeps = { agents: [plugin], stdout, stderr, env: { HOME: dir, PATH: '/usr/bin:/bin' }, cwd: dir };
      const code = await runCli([...args, '--data-dir', join(dir, 'data')], deps);
      return { code, out: stdout.text, err: stderr.text };
    };
    const added = await cli(['schedules', 'add', 'feedbacklens', '--every', '1h', '--input', `csv_path=${outside}`, '--input', 'product_name=X']);
    expect(added.code).toBe(2);
    expect(added.err).toContain(`runtrail: input.csv_path: ${outside} is outside the input roots (${join(dir, 'data', 'uploads')})`);
    expect((await cli(['schedules', 'list'])).out).toMatch(/^no schedules/);
  });
});
