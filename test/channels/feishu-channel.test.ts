/**
 * The Feishu / Lark channel end to end: Runtrail's server side against our own open platform
 * (HTTP API + the SDK's long connection) on loopback, pointed at by `domain`. Each test asserts the
 * requests Runtrail makes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeFeishu, type FsMessage } from './fakes/fake-feishu.js';
import { project, scriptAgent, startHarness, type Harness } from './channel-harness.js';
import { eventually } from '../tools/helpers.js';
import { feishuChannel } from '../../src/channels/feishu/feishu-channel.js';

const ALICE = 'ou_alice';
const MALLORY = 'ou_mallory';
const DM = 'oc_dm_alice';
const GROUP = 'oc_group';

let fs: FakeFeishu;
let h: Harness | null = null;
afterEach(async () => {
  await h?.stop();
  h?.p.cleanup();
  h = null;
  await fs?.stop();
});

async function start(files: Record<string, string>, extra: Record<string, unknown> = {}): Promise<Harness> {
  fs = new FakeFeishu();
  await fs.start();
  const p = project({
    '.runtrail/channels.json': JSON.stringify({
      feishu: { app_id: '${FEISHU_APP_ID}', app_secret: '${FEISHU_APP_SECRET}', domain: fs.url, allow_from: [ALICE, GROUP], edit_interval_ms: 200, ...extra },
    }),
    ...scriptAgent('chat', [{ text: 'Hello from the chat agent.' }]),
    ...files,
  });
  h = await startHarness(p, { FEISHU_APP_ID: fs.appId, FEISHU_APP_SECRET: fs.appSecret });
  expect(h.registry.problems.filter((x) => x.level === 'error')).toEqual([]);
  await until(() => fs.connected === 1, 'the long connection');
  return h;
}

async function until(pred: () => boolean, what: string, ms = 30_000): Promise<void> {
  if (!(await eventually(pred, ms)))
    throw new Error(`timed out waiting for ${what}; calls: ${JSON.stringify(fs.calls.map((c) => [c.method, c.path]))}\nlog: ${h?.logs.join('\n')}`);
}

async function finished(n: number): Promise<void> {
  await until(() => h!.host.status()[0].live_replies === 0 && h!.host.status()[0].messages_in >= n, 'the replies to finish');
}

const creates = () => fs.calls.filter((c) => c.method === 'POST' && (c.path === '/open-apis/im/v1/messages' || c.path.endsWith('/reply')));
const patches = () => fs.callsOf('PATCH', '/open-apis/im/v1/messages/');
const fences = (s: string) => (s.match(/^```/gm) ?? []).length;

// Each test starts a server, a fake service and a long connection; under a loaded CI the first one
// also pays the SDK's import, so the waits inside (30 s) must fit within the test's own time.
describe('Feishu channel', { timeout: 90_000 }, () => {
  it('a /run from an allowed user: one card posted at the start (a reply, with a uuid), updated in place as the answer streams, ending as the answer', async () => {
    const answer = 'The answer comes in many small words, so that the card is updated while it streams in.';
    await start(scriptAgent('writer', [{ text: answer, chunkDelayMs: 40 }]));
    const { message_id } = fs.userMessage({ chat: DM, user: ALICE, text: '/run writer -- tell me' });
    await until(() => fs.inChat(DM).some((m) => m.text === answer), 'the answer');
    await finished(1);
    expect(creates()).toHaveLength(1);
    const first = creates()[0];
    expect(first.path).toBe(`/open-apis/im/v1/messages/${message_id}/reply`);
    expect(first.body).toMatchObject({ msg_type: 'interactive', uuid: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const card = fs.inChat(DM)[0];
    expect(card.card!.config!.update_multi).toBe(true);
    const texts = patches().map((c) => JSON.parse(String(c.body.content)).elements[0].content as string);
    expect(texts.length).toBeGreaterThanOrEqual(3);
    expect(texts.slice(0, -1).some((t) => t.startsWith('⏳') && t.includes('The answer comes'))).toBe(true);
    expect(texts.at(-1)).toBe(answer);
    const at = patches().map((c) => c.at);
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(190);
    // every event frame got its answer back on the long connection
    expect([...fs.answers.values()].every((a) => a.code === 200)).toBe(true);
    expect((await h!.service.list()).runs[0]).toMatchObject({ plugin: 'writer', status: 'completed', conversation_id: `feishu:${DM}` });
  });

  it('in a group the bot answers only when mentioned', async () => {
    await start({});
    fs.userMessage({ chat: GROUP, user: ALICE, group: true, text: 'talking among ourselves' });
    fs.userMessage({ chat: GROUP, user: ALICE, group: true, mention: true, text: 'hello' });
    await until(() => fs.inChat(GROUP).some((m) => m.text === 'Hello from the chat agent.'), 'the answer');
    await finished(1);
    expect((await h!.service.list()).runs.map((r) => r.goal)).toEqual(['hello']);
  });

  it('a long answer is split at 6,000 characters with code fences closed and reopened; each card within 30 KB, posted once', async () => {
    const code = '```go\n' + Array.from({ length: 400 }, (_, i) => `fmt.Println("line", ${i}, "of the \\"program\\"")`).join('\n') + '\n```';
    const long = `Here it is.\n\n${code}\n\nDone.`;
    await start(scriptAgent('coder', [{ text: long }]));
    fs.userMessage({ chat: DM, user: ALICE, text: '/run coder -- write' });
    await until(() => fs.inChat(DM).some((m) => m.text.endsWith('Done.')), 'the last part');
    await finished(1);
    const posted = fs.inChat(DM);
    expect(posted.length).toBeGreaterThanOrEqual(3);
    for (const m of posted) {
      expect(m.text.length).toBeLessThanOrEqual(6000);
      expect(fences(m.text) % 2).toBe(0);
    }
    expect(creates()).toHaveLength(posted.length);
    const body = posted.map((m) => m.text).join('\n');
    for (const i of [0, 200, 399]) expect(body).toContain(`fmt.Println("line", ${i}, "of the \\"program\\"")`);
  });

  it("uploads the run's artifacts and posts them as file messages, named as in the manifest", async () => {
    await start(
      scriptAgent('reporter', [{ toolCalls: [{ name: 'write_artifact', args: { path: 'findings.md', content: '# Findings\n' } }] }, { text: 'Attached.' }]),
    );
    fs.userMessage({ chat: DM, user: ALICE, text: '/run reporter -- go' });
    await until(() => fs.inChat(DM).some((m) => m.file), 'the file');
    await finished(1);
    expect(fs.inChat(DM).find((m) => m.file)!.file).toEqual({ name: 'findings.md', text: '# Findings\n' });
    expect(fs.callsOf('POST', '/open-apis/im/v1/files')[0].body).toMatchObject({ file_type: 'stream', file_name: 'findings.md' });
  });

  it('an approval is card buttons; a stranger\'s press gets a "not allowed" toast and decides nothing; the allowed press decides as that person', async () => {
    await start(
      scriptAgent(
        'careful',
        [{ toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] }, { text: 'Written.' }],
        'permissions: { write_artifact: ask }',
      ),
    );
    fs.userMessage({ chat: GROUP, user: ALICE, group: true, mention: true, text: '/run careful -- write' });
    let ask: FsMessage | undefined;
    await until(() => (ask = fs.inChat(GROUP).find((m) => m.card?.elements.some((e) => e.tag === 'action'))) !== undefined, 'the buttons');
    const buttons = ask!.card!.elements.find((e) => e.tag === 'action')!.actions!;
    expect(buttons.map((b) => [b.text.content, b.type])).toEqual([
      ['Approve', 'primary'],
      ['Deny', 'danger'],
    ]);
    const stranger = fs.press({ user: MALLORY, message: ask!, value: buttons[0].value });
    await until(() => fs.answers.has(stranger), 'the answer to the stranger');
    const toast = (id: string) =>
      JSON.parse(Buffer.from(String(fs.answers.get(id)!.data), 'base64').toString('utf8')) as { toast: { type: string; content: string } };
    expect(toast(stranger).toast).toMatchObject({ type: 'error', content: expect.stringMatching(/^Not allowed/) });
    const run = (await h!.service.list()).runs[0];
    expect(h!.service.pendingApprovals(run.run_id)).toHaveLength(1);
    const alice = fs.press({ user: ALICE, message: ask!, value: buttons[0].value });
    await until(() => fs.answers.has(alice), 'the answer to the approver');
    expect(toast(alice).toast.content).toMatch(/^Approved write_artifact/);
    await until(() => fs.inChat(GROUP).some((m) => m.text === 'Written.'), 'the answer');
    await finished(2);
    const decided = fs.inChat(GROUP).find((m) => m.message_id === ask!.message_id)!;
    expect(decided.text).toMatch(/^✅ write_artifact approved by feishu:ou_alice/);
    expect(decided.card!.elements.some((e) => e.tag === 'action')).toBe(false);
  });

  it('a sender not in allow_from gets one polite refusal and nothing runs', async () => {
    await start({});
    fs.userMessage({ chat: 'oc_dm_mallory', user: MALLORY, text: 'hello' });
    await until(() => fs.inChat('oc_dm_mallory').length === 1, 'the refusal');
    expect(fs.inChat('oc_dm_mallory')[0].text).toMatch(/^Sorry, this bot does not take requests from you: your id \(ou_mallory\) is not in allow_from/);
    fs.userMessage({ chat: 'oc_dm_mallory', user: MALLORY, text: 'please' });
    await until(() => h!.host.status()[0].refused === 2, 'the second refusal counted');
    expect(fs.inChat('oc_dm_mallory')).toHaveLength(1);
    expect((await h!.service.list()).runs).toEqual([]);
  });

  it('a 429 on a card update is waited out as x-ogw-ratelimit-reset says, without a second message', async () => {
    const answer = 'Slow and steady words arrive one after another in this answer.';
    await start(scriptAgent('writer', [{ text: answer, chunkDelayMs: 50 }]));
    fs.failNext('PATCH /open-apis/im/v1/messages/', { status: 429, reset: 1 });
    fs.userMessage({ chat: DM, user: ALICE, text: '/run writer -- go' });
    await until(() => fs.inChat(DM).some((m) => m.text === answer), 'the answer');
    await finished(1);
    expect(creates()).toHaveLength(1);
    expect(fs.inChat(DM)).toHaveLength(1);
    expect(patches()[1].at - patches()[0].at).toBeGreaterThanOrEqual(1000);
  });

  it('a 5xx on a send is retried with the same uuid, and Feishu posts the message once', async () => {
    await start({});
    fs.failNext('POST /open-apis/im/v1/messages/', { status: 502 });
    fs.userMessage({ chat: DM, user: ALICE, text: 'hello' });
    await until(() => fs.inChat(DM).some((m) => m.text === 'Hello from the chat agent.'), 'the answer');
    await finished(1);
    expect(creates()).toHaveLength(2);
    expect(creates()[0].body.uuid).toBe(creates()[1].body.uuid);
    expect(fs.inChat(DM)).toHaveLength(1);
  });

  it('the same event delivered twice is handled once', async () => {
    await start({});
    const first = fs.userMessage({ chat: DM, user: ALICE, text: 'hello' });
    await until(() => fs.inChat(DM).length === 1, 'the answer');
    await finished(1);
    fs.push('im.message.receive_v1', first.event, first.event_id);
    fs.userMessage({ chat: DM, user: ALICE, text: '/runs' });
    await until(() => fs.inChat(DM).length === 2, 'the /runs answer');
    expect((await h!.service.list()).runs).toHaveLength(1);
    expect(h!.host.status()[0].duplicates).toBe(1);
  });

  it('a restart mid-conversation: the card being streamed is finished after it, not posted again; the event redelivered is not handled again', async () => {
    await start(scriptAgent('slow', [{ text: 'never reached', delayMs: 60_000 }]));
    const p = h!.p;
    const first = fs.userMessage({ chat: DM, user: ALICE, text: '/run slow -- take your time' });
    await until(() => creates().length === 1, 'the preview');
    await h!.stop();
    h = null;
    h = await startHarness(p, { FEISHU_APP_ID: fs.appId, FEISHU_APP_SECRET: fs.appSecret });
    await until(() => fs.connected === 1 && /cancelled/.test(fs.inChat(DM)[0].text), 'the card updated with the outcome');
    expect(creates()).toHaveLength(1);
    fs.push('im.message.receive_v1', first.event, first.event_id);
    fs.userMessage({ chat: DM, user: ALICE, text: 'and now?' });
    await until(() => fs.inChat(DM).some((m) => m.text === 'Hello from the chat agent.'), 'the next answer');
    await finished(1);
    const runs = (await h.service.list()).runs;
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.conversation_id))).toEqual(new Set([`feishu:${DM}`]));
    expect(h.host.status()[0].duplicates).toBe(1);
  });

  it('check asks the open platform who the bot is; a wrong secret fails without being shown', async () => {
    await start({});
    const config = { app_id: fs.appId, app_secret: fs.appSecret, domain: fs.url };
    expect(await feishuChannel.check!(config, AbortSignal.timeout(10_000))).toEqual({ ok: true, detail: `bot Runtrail (ou_bot000001) at ${fs.url}` });
    const bad = await feishuChannel.check!({ ...config, app_secret: 'a-wrong-secret-value' }, AbortSignal.timeout(10_000));
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).not.toContain('a-wrong-secret-value');
  });
});
