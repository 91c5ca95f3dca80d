/**
 * Chat channels, measured against our own Telegram Bot API server on loopback (the tests' fake):
 *   first preview  an update posted to the fake → the bot's first message in that chat (the preview),
 *                  through Runtrail's whole path (getUpdates, the inbound ledger on disk, the IM layer,
 *                  RunService.create, the reply's record on disk, sendMessage); the baseline is a bare
 *                  grammY loop on the same fake that answers each update with one sendMessage.
 *   edits          a run streaming 400 chunks as fast as the script model goes, in 4 private chats and
 *                  2 groups at once: edits per second per chat, and the most edits of one chat within
 *                  any window of its interval — 1 means the configured limit (1 s private, 3 s group) held.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from 'grammy';
import { BUILTIN_CHANNELS } from '../src/channels/builtin-channels.js';
import { ExtensionRegistry } from '../src/extensions/extension-registry.js';
import { RunService } from '../src/runtime/service/run-service.js';
import { ChannelHost } from '../src/server/channel-host/channel-host.js';
import { FakeTelegram } from '../test/channels/fakes/fake-telegram.js';

const PREVIEWS = 60;
const CHUNKS = 400;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function until(pred: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('bench: timed out');
    await new Promise((r) => setTimeout(r, 1));
  }
}

function project(tgUrl: string, turns: unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'rt-channels-bench-'));
  mkdirSync(join(dir, '.runtrail', 'agents'), { recursive: true });
  const allow = [...Array.from({ length: PREVIEWS + 10 }, (_, i) => 1000 + i), ...Array.from({ length: 10 }, (_, i) => -1000 - i)];
  writeFileSync(
    join(dir, '.runtrail', 'channels.json'),
    JSON.stringify({ telegram: { token: '${BENCH_TG}', api_root: tgUrl, allow_from: allow, poll_timeout_s: 1 } }),
  );
  writeFileSync(join(dir, '.runtrail', 'agents', 'chat.md'), '---\nname: chat\ndescription: bench\nmodel: script:chat.turns.json\n---\nAnswer.\n');
  writeFileSync(join(dir, '.runtrail', 'agents', 'chat.turns.json'), JSON.stringify(turns));
  return dir;
}

async function runtrail(tg: FakeTelegram, turns: unknown[]) {
  const dir = project(tg.url, turns);
  const registry = await ExtensionRegistry.load({
    projectDir: dir,
    builtins: [],
    builtinSkillsDir: join(dir, 'none'),
    builtinChannels: [...BUILTIN_CHANNELS],
    env: { BENCH_TG: tg.token },
  });
  const service = new RunService({ dataDir: join(dir, '.runtrail'), agentSource: registry, env: {}, cwd: dir, processRegistry: null, concurrency: 8 });
  await service.init();
  const host = new ChannelHost({
    service,
    channels: [...registry.channels.values()],
    dataDir: join(dir, '.runtrail'),
    agents: () => registry.list(),
    log: () => undefined,
  });
  host.start();
  await until(() => host.status()[0]?.connected === true);
  return {
    host,
    async stop() {
      await host.stop();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The floor: grammY polling the same fake and answering each update with one sendMessage. */
async function bareLoop(tg: FakeTelegram, signal: AbortSignal): Promise<void> {
  const api = new Api(tg.token, { apiRoot: tg.url });
  let offset: number | undefined;
  while (!signal.aborted) {
    const updates = await api.getUpdates({ ...(offset !== undefined ? { offset } : {}), timeout: 1 }).catch(() => []);
    for (const u of updates) {
      offset = u.update_id + 1;
      if (u.message) await api.sendMessage(u.message.chat.id, '⏳ queued');
    }
  }
}

async function firstPreviews(tg: FakeTelegram, chat0: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < PREVIEWS; i++) {
    const chat = chat0 + i;
    const t0 = performance.now();
    tg.userMessage({ chatId: chat, from: chat, text: 'hello' });
    await until(() => tg.messagesIn(chat).length > 0);
    out.push(performance.now() - t0);
  }
  return out;
}

/** The most edits of one chat within any window of `ms`. */
function mostInWindow(at: number[], ms: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (at[i] - at[j] >= ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

export async function run(): Promise<void> {
  // first preview: the bare loop, then Runtrail, on fakes of their own
  const bareTg = new FakeTelegram();
  await bareTg.start();
  const stop = new AbortController();
  const loop = bareLoop(bareTg, stop.signal);
  const bare = await firstPreviews(bareTg, 1000);
  stop.abort();
  await loop;
  await bareTg.stop();

  const tg = new FakeTelegram();
  await tg.start();
  const rt = await runtrail(tg, [{ text: 'Hello.' }]);
  const ours = await firstPreviews(tg, 1000);
  await until(() => rt.host.status()[0].live_replies === 0);
  await rt.stop();
  await tg.stop();
  console.log(
    `first preview   bare grammY loop p50 ${pct(bare, 50).toFixed(1)} ms p99 ${pct(bare, 99).toFixed(1)} ms · runtrail p50 ${pct(ours, 50).toFixed(1)} ms p99 ${pct(ours, 99).toFixed(1)} ms (${PREVIEWS} updates, each a new run) · ratio p50 ${(pct(ours, 50) / pct(bare, 50)).toFixed(1)}×`,
  );

  // edits under a fast stream, several chats at once
  const words = Array.from({ length: CHUNKS }, (_, i) => `word${i} `).join('');
  const tg2 = new FakeTelegram();
  await tg2.start();
  const rt2 = await runtrail(tg2, [{ text: words, chunkDelayMs: 3 }]);
  const direct = [1001, 1002, 1003, 1004];
  const groups = [-1001, -1002];
  const t0 = performance.now();
  for (const c of direct) tg2.userMessage({ chatId: c, from: c, text: 'go' });
  for (const c of groups) tg2.userMessage({ chatId: c, from: 1001, group: true, mention: true, text: 'go' });
  const all = [...direct, ...groups];
  await until(() => all.every((c) => tg2.messagesIn(c).some((m) => m.text?.startsWith('word0') && m.text.endsWith(`word${CHUNKS - 1}`))), 120_000);
  const seconds = (performance.now() - t0) / 1000;
  const rows = all.map((c) => {
    const at = tg2
      .calls('editMessageText')
      .filter((r) => Number(r.params.chat_id) === c)
      .map((r) => r.at);
    const interval = c < 0 ? 3000 : 1000;
    return { c, edits: at.length, perS: at.length / seconds, worst: mostInWindow(at, interval) };
  });
  await until(() => rt2.host.status()[0].live_replies === 0);
  await rt2.stop();
  await tg2.stop();
  const fmt = (r: (typeof rows)[number]) => `${r.perS.toFixed(2)}/s (${r.edits} edits, most in one interval ${r.worst})`;
  console.log(
    `edits per chat  private (limit 1/s): ${rows
      .filter((r) => r.c > 0)
      .map(fmt)
      .join(', ')}`,
  );
  console.log(
    `edits per chat  group (limit 1 per 3 s): ${rows
      .filter((r) => r.c < 0)
      .map(fmt)
      .join(', ')} · stream of ${CHUNKS} chunks over ${seconds.toFixed(1)} s`,
  );
  if (rows.some((r) => r.worst > 1)) throw new Error('an edit interval was broken');
}
