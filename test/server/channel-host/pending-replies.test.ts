/**
 * A chat message that starts a run is noted before the run is created, and the note goes once the
 * run's delivery record is written. What a process killed between the two leaves on the disk — the
 * note and the run, no delivery record — is set up here directly (the window is too short to hit
 * with a real kill), then the next start takes it up against our own Telegram Bot API server: the
 * run's answer reaches the chat; a note with no run asks the chat to send the message again.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PendingReplies } from '../../../src/server/channel-host/pending-replies.js';
import { FakeTelegram } from '../../channels/fakes/fake-telegram.js';
import { project, scriptAgent, startHarness, type Harness } from '../../channels/channel-harness.js';
import { eventually } from '../../tools/helpers.js';

const ALICE = 555;
let tg: FakeTelegram | null = null;
let h: Harness | null = null;
afterEach(async () => {
  await h?.stop();
  h?.p.cleanup();
  h = null;
  await tg?.stop();
  tg = null;
});

function channels(url: string): string {
  return JSON.stringify({
    telegram: { token: '${TEST_TG_TOKEN}', api_root: url, allow_from: [ALICE], default_agent: 'chat', poll_timeout_s: 1, edit_interval_ms: 200 },
  });
}

const pendingDir = (dataDir: string) => join(dataDir, 'channels', 'telegram', 'pending');

describe('a chat reply noted before its run, left by a killed process', { timeout: 90_000 }, () => {
  it('the run the message started has no delivery record: the next start delivers its answer to the chat', async () => {
    tg = new FakeTelegram();
    await tg.start();
    const p = project(scriptAgent('chat', [{ text: 'Hello! I am the chat agent.' }]));
    // the dead process: it noted the message, created its run, and died before the run's delivery record
    h = await startHarness(p);
    const at = new Date().toISOString();
    const dataDir = h.dataDir;
    const run = await h.service.create({ plugin: 'chat', goal: 'hello', conversation_id: `telegram:${ALICE}` });
    await h.service.wait(run.run_id);
    await h.stop();
    h = null;
    await new PendingReplies(pendingDir(dataDir)).add({
      delivery_id: 'update:1',
      conversation_id: `telegram:${ALICE}`,
      to: { chat: String(ALICE) },
      chat_type: 'direct',
      at,
    });

    p.write('.runtrail/channels.json', channels(tg.url));
    h = await startHarness(p, { TEST_TG_TOKEN: tg.token });
    expect(await eventually(() => tg!.messagesIn(ALICE).some((m) => m.text === 'Hello! I am the chat agent.'), 30_000), h.logs.join('\n')).toBe(true);
    expect(await eventually(() => !existsSync(pendingDir(dataDir)) || readdirSync(pendingDir(dataDir)).length === 0)).toBe(true);
    expect(readdirSync(join(dataDir, 'channels', 'telegram', 'deliveries')).filter((n) => n.startsWith(run.run_id) && n.endsWith('.json'))).toHaveLength(1);
  });

  it('no run was created for the message: the chat is asked to send it again', async () => {
    tg = new FakeTelegram();
    await tg.start();
    const p = project({ ...scriptAgent('chat', [{ text: 'Hello! I am the chat agent.' }]), '.runtrail/channels.json': '' });
    const dataDir = join(p.dir, '.runtrail');
    await new PendingReplies(pendingDir(dataDir)).add({
      delivery_id: 'update:2',
      conversation_id: `telegram:${ALICE}`,
      to: { chat: String(ALICE) },
      chat_type: 'direct',
      at: new Date().toISOString(),
    });
    p.write('.runtrail/channels.json', channels(tg.url));
    h = await startHarness(p, { TEST_TG_TOKEN: tg.token });
    expect(await eventually(() => tg!.messagesIn(ALICE).some((m) => /please send it again/.test(m.text ?? '')), 30_000), h.logs.join('\n')).toBe(true);
    expect((await h.service.list()).runs).toHaveLength(0);
  });
});
