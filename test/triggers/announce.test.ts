/**
 * `announce` on a schedule: the run's answer is posted to a chat of a chat channel once the run ends
 * (the builtin Telegram channel against the tests' own Bot API server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TriggerHost } from '../../src/triggers/trigger-host.js';
import { FakeTelegram } from '../channels/fakes/fake-telegram.js';
import { project, scriptAgent, startHarness, type Harness } from '../channels/channel-harness.js';
import { eventually } from '../tools/helpers.js';

const ALICE = 555;
let tg: FakeTelegram | null = null;
let h: Harness | null = null;
let triggers: TriggerHost | null = null;
afterEach(async () => {
  await triggers?.stop();
  await h?.stop();
  h?.p.cleanup();
  await tg?.stop();
  triggers = null;
  h = null;
  tg = null;
});

describe('announce', () => {
  it("a schedule's run posts its answer to the chat named in announce", async () => {
    tg = new FakeTelegram();
    await tg.start();
    const p = project({
      '.runtrail/channels.json': JSON.stringify({
        telegram: { token: '${TEST_TG_TOKEN}', api_root: tg.url, allow_from: [ALICE], default_agent: 'report', poll_timeout_s: 1 },
      }),
      ...scriptAgent('report', [{ text: 'Weekly numbers: all green.' }]),
    });
    h = await startHarness(p, { TEST_TG_TOKEN: tg.token });
    const harness = h;
    triggers = new TriggerHost({ dataDir: harness.dataDir, agents: () => harness.registry.names(), announce: harness.host.announce });
    await triggers.start(harness.service);
    const s = await triggers.create({ agent: 'report', every: '1h', announce: { channel: 'telegram', chat: String(ALICE) } });
    const fire = await triggers.runNow(s.schedule_id);
    expect((await harness.service.wait(fire.run_id!)).status).toBe('completed');
    expect(await eventually(() => tg!.messagesIn(ALICE).some((m) => m.text === 'Weekly numbers: all green.'), 20_000)).toBe(true);
    // posted once
    expect(tg.messagesIn(ALICE).filter((m) => m.text === 'Weekly numbers: all green.')).toHaveLength(1);
  });
});
