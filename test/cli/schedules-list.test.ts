/**
 * `runtrail schedules list` (and GET /api/schedules) says what went wrong with a schedule: its last
 * failed fire (a run that failed, with its run id) and the completion webhooks of its runs that are
 * not getting through (attempts, the last error, the next retry), not only "last … failed" or the
 * run's own webhook log.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { getJson, postJson } from '../server/helpers.js';
import { removeDir, startStack, talkPlugin, type Stack } from '../triggers/helpers.js';
import { Receiver } from '../triggers/receiver.js';
import { Sink } from './sink.js';

let stack: Stack | null = null;
let receiver: Receiver | null = null;
afterEach(async () => {
  await stack?.stop();
  await receiver?.stop();
  removeDir(stack?.dataDir ?? '');
  stack = receiver = null;
});

describe('schedules list shows failures', () => {
  it("a failed run and its webhook's failing deliveries are on the schedule's lines and in the API", async () => {
    receiver = await new Receiver().start();
    receiver.answers = Array.from({ length: 100 }, () => 500);
    stack = await startStack({
      config: { webhooks: { allow: [`http://127.0.0.1:${receiver.port}/*`], retry: { base: '200ms', max_interval: '5s', for: '1m' } } },
    });
    const id = (await postJson(`${stack.url}/api/schedules`, { agent: 'talk', every: '1h', goal: 'fail now', webhook: { url: receiver.url() } })).body
      .schedule_id as string;
    const fired = (await postJson(`${stack.url}/api/schedules/${id}/run`, {})).body;
    expect((await stack.service.wait(fired.run_id)).status).toBe('failed');
    await vi.waitFor(() => expect(receiver!.got.length).toBeGreaterThanOrEqual(2), { timeout: 15_000, interval: 100 });

    const s = (await getJson(`${stack.url}/api/schedules/${id}`)).body;
    expect(s.last_failure).toMatchObject({ run_id: fired.run_id, run_status: 'failed' });
    expect(s.webhook_failures[0]).toMatchObject({ run_id: fired.run_id, type: 'run.failed', state: 'pending', error: 'HTTP 500', url: receiver.url() });
    expect(s.webhook_failures[0].attempts).toBeGreaterThanOrEqual(2);

    const stdout = new Sink();
    const stderr = new Sink();
    const deps: CliDeps = { agents: [talkPlugin()], stdout, stderr, env: { PATH: '/usr/bin:/bin' }, cwd: stack.dataDir };
    expect(await runCli(['schedules', 'list', '--data-dir', stack.dataDir], deps), stderr.text).toBe(0);
    const lines = stdout.text.split('\n');
    expect(lines[0]).toContain(`${id}  talk  every 1h  backing off until`);
    expect(lines[1]).toMatch(new RegExp(`^  last failure \\(fire time \\S+\\): run ${fired.run_id} failed$`));
    expect(lines[2]).toMatch(
      new RegExp(`^  webhook run\\.failed of ${fired.run_id} to ${receiver.url()}: \\d+ failed attempt\\(s\\), last: HTTP 500, retrying at \\d{4}-\\S+Z$`),
    );
  }, 60_000);
});
