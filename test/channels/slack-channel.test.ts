/**
 * The Slack channel end to end: Runtrail's server side against our own Slack (Web API + Socket Mode)
 * on loopback, pointed at by `api_url`. Each test asserts the calls Runtrail makes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeSlack, type SlackMessage } from './fakes/fake-slack.js';
import { project, scriptAgent, startHarness, type Harness } from './channel-harness.js';
import { eventually } from '../tools/helpers.js';
import { slackChannel } from '../../src/channels/slack/slack-channel.js';

const ALICE = 'UALICE';
const MALLORY = 'UMALLORY';
const DM = 'DALICE';
const TEAM = 'CTEAM';

let slack: FakeSlack;
let h: Harness | null = null;
afterEach(async () => {
  await h?.stop();
  h?.p.cleanup();
  h = null;
  await slack?.stop();
});

async function start(files: Record<string, string>, extra: Record<string, unknown> = {}): Promise<Harness> {
  slack = new FakeSlack();
  await slack.start();
  const p = project({
    '.runtrail/channels.json': JSON.stringify({
      slack: { bot_token: '${SLACK_BOT}', app_token: '${SLACK_APP}', api_url: slack.apiUrl, allow_from: [ALICE, TEAM], edit_interval_ms: 200, ...extra },
    }),
    ...scriptAgent('chat', [{ text: 'Hello from the chat agent.' }]),
    ...files,
  });
  h = await startHarness(p, { SLACK_BOT: slack.botToken, SLACK_APP: slack.appToken });
  expect(h.registry.problems.filter((x) => x.level === 'error')).toEqual([]);
  await until(() => slack.connected === 1, 'the Socket Mode connection');
  return h;
}

async function until(pred: () => boolean, what: string, ms = 30_000): Promise<void> {
  if (!(await eventually(pred, ms)))
    throw new Error(
      `timed out waiting for ${what}; calls: ${JSON.stringify(slack.calls.map((c) => [c.method, c.args.text ?? '']))}\nlog: ${h?.logs.join('\n')}`,
    );
}

async function finished(n: number): Promise<void> {
  await until(() => h!.host.status()[0].live_replies === 0 && h!.host.status()[0].messages_in >= n, 'the replies to finish');
}

const posts = (channel: string) => slack.callsOf('chat.postMessage').filter((c) => c.args.channel === channel);
const fences = (s: string) => (s.match(/^```/gm) ?? []).length;

// Each test starts a server, a fake service and a long connection; under a loaded CI the first one
// also pays the SDK's import, so the waits inside (30 s) must fit within the test's own time.
describe('Slack channel', { timeout: 90_000 }, () => {
  it('a /run from an allowed user: one message posted at the start, updated in place as the answer streams, ending as the answer; events acknowledged', async () => {
    const answer = 'The answer comes in many small words, so that the preview is updated while it streams in.';
    await start(scriptAgent('writer', [{ text: answer, chunkDelayMs: 40 }]));
    slack.userMessage({ channel: DM, user: ALICE, im: true, text: '/run writer -- tell me' });
    await until(() => slack.inChannel(DM).some((m) => m.text === answer), 'the answer');
    await finished(1);
    expect(posts(DM)).toHaveLength(1);
    expect(String(posts(DM)[0].args.text)).toMatch(/^⏳/);
    const updates = slack.callsOf('chat.update').map((c) => String(c.args.text));
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates.slice(0, -1).some((t) => t.startsWith('⏳') && t.includes('The answer comes'))).toBe(true);
    expect(updates.at(-1)).toBe(answer);
    const at = slack.callsOf('chat.update').map((c) => c.at);
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(190);
    expect(slack.acks.length).toBeGreaterThanOrEqual(1);
    expect((await h!.service.list()).runs[0]).toMatchObject({ plugin: 'writer', status: 'completed', conversation_id: `slack:${DM}` });
  });

  it("in a channel the bot answers a mention in the message's thread, and follow-ups in that thread without a mention; other talk is ignored", async () => {
    await start({});
    slack.userMessage({ channel: TEAM, user: ALICE, text: 'talking among ourselves' });
    const { ts } = slack.userMessage({ channel: TEAM, user: ALICE, mention: true, text: 'hello' });
    await until(() => slack.inChannel(TEAM).some((m) => m.text === 'Hello from the chat agent.'), 'the answer');
    await finished(1);
    expect(slack.inChannel(TEAM)[0].thread_ts).toBe(ts);
    slack.userMessage({ channel: TEAM, user: ALICE, thread_ts: ts, text: 'and again' });
    await until(() => slack.inChannel(TEAM).length === 2, 'the answer in the thread');
    await finished(2);
    const runs = (await h!.service.list()).runs;
    expect(runs.map((r) => r.goal).sort()).toEqual(['and again', 'hello']);
    expect(new Set(runs.map((r) => r.conversation_id))).toEqual(new Set([`slack:${TEAM}:${ts}`]));
  });

  it('a long answer is split at 4,000 characters with code fences closed and reopened; each part posted once', async () => {
    const code = '```js\n' + Array.from({ length: 250 }, (_, i) => `const v${i} = compute(${i}); // step ${i}`).join('\n') + '\n```';
    const long = `Here it is.\n\n${code}\n\nDone.`;
    await start(scriptAgent('coder', [{ text: long }]));
    slack.userMessage({ channel: DM, user: ALICE, im: true, text: '/run coder -- write' });
    await until(() => slack.inChannel(DM).some((m) => m.text.endsWith('Done.')), 'the last part');
    await finished(1);
    const posted = slack.inChannel(DM);
    expect(posted.length).toBeGreaterThanOrEqual(3);
    for (const m of posted) {
      expect(m.text.length).toBeLessThanOrEqual(4000);
      expect(fences(m.text) % 2).toBe(0);
    }
    expect(posts(DM)).toHaveLength(posted.length);
    const body = posted.map((m) => m.text).join('\n');
    for (const i of [0, 125, 249]) expect(body).toContain(`const v${i} = compute(${i}); // step ${i}`);
  });

  it("uploads the run's artifacts into the chat, named as in the manifest", async () => {
    await start(
      scriptAgent('reporter', [{ toolCalls: [{ name: 'write_artifact', args: { path: 'summary.md', content: '# Summary\n' } }] }, { text: 'Attached.' }]),
    );
    slack.userMessage({ channel: DM, user: ALICE, im: true, text: '/run reporter -- go' });
    await until(() => slack.inChannel(DM).some((m) => m.file), 'the file');
    await finished(1);
    expect(slack.inChannel(DM).find((m) => m.file)!.file).toEqual({ name: 'summary.md', text: '# Summary\n' });
    expect(slack.callsOf('files.getUploadURLExternal')[0].args).toMatchObject({ filename: 'summary.md' });
    expect(slack.callsOf('files.completeUploadExternal')[0].args).toMatchObject({ channel_id: DM });
  });

  it('an approval is Block Kit buttons; a stranger\'s press is answered "not allowed" (ephemeral) and decides nothing; the allowed press decides as that person', async () => {
    await start(
      scriptAgent(
        'careful',
        [{ toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] }, { text: 'Written.' }],
        'permissions: { write_artifact: ask }',
      ),
    );
    slack.userMessage({ channel: TEAM, user: ALICE, mention: true, text: '/run careful -- write' });
    let ask: SlackMessage | undefined;
    await until(() => (ask = slack.inChannel(TEAM).find((m) => m.blocks)) !== undefined, 'the buttons');
    const actions = (ask!.blocks as Array<{ type: string; elements?: Array<{ value: string; text: { text: string }; style?: string }> }>).find(
      (b) => b.type === 'actions',
    )!;
    expect(actions.elements!.map((e) => [e.text.text, e.style])).toEqual([
      ['Approve', 'primary'],
      ['Deny', 'danger'],
    ]);
    const approve = actions.elements![0].value;
    slack.press({ user: MALLORY, message: ask!, value: approve });
    await until(() => slack.ephemeral.length === 1, 'the answer to the stranger');
    expect(slack.ephemeral[0]).toMatchObject({ user: MALLORY, text: expect.stringMatching(/^Not allowed/) });
    const run = (await h!.service.list()).runs[0];
    expect(h!.service.pendingApprovals(run.run_id)).toHaveLength(1);
    slack.press({ user: ALICE, message: ask!, value: approve });
    await until(() => slack.ephemeral.length === 2, 'the answer to the approver');
    expect(slack.ephemeral[1]).toMatchObject({ user: ALICE, text: expect.stringMatching(/^Approved write_artifact/) });
    await until(() => slack.inChannel(TEAM).some((m) => m.text === 'Written.'), 'the answer');
    await finished(2);
    const decided = slack.inChannel(TEAM).find((m) => m.ts === ask!.ts)!;
    expect(decided.text).toMatch(/^✅ write_artifact approved by slack:UALICE \(@user_UALICE\)/);
    expect(decided.blocks).toBeUndefined();
  });

  it('a sender not in allow_from gets one polite refusal and nothing runs', async () => {
    await start({});
    slack.userMessage({ channel: 'DMAL', user: MALLORY, im: true, text: 'hello' });
    await until(() => slack.inChannel('DMAL').length === 1, 'the refusal');
    expect(slack.inChannel('DMAL')[0].text).toMatch(/^Sorry, this bot does not take requests from you: your id \(UMALLORY\) is not in allow_from/);
    slack.userMessage({ channel: 'DMAL', user: MALLORY, im: true, text: 'please' });
    await until(() => h!.host.status()[0].refused === 2, 'the second refusal counted');
    expect(slack.inChannel('DMAL')).toHaveLength(1);
    expect((await h!.service.list()).runs).toEqual([]);
  });

  it('a 429 on chat.update is waited out as Retry-After says, without a second message', async () => {
    const answer = 'Slow and steady words arrive one after another in this answer.';
    await start(scriptAgent('writer', [{ text: answer, chunkDelayMs: 50 }]));
    slack.failNext('chat.update', { status: 429, retryAfter: 1 });
    slack.userMessage({ channel: DM, user: ALICE, im: true, text: '/run writer -- go' });
    await until(() => slack.inChannel(DM).some((m) => m.text === answer), 'the answer');
    await finished(1);
    expect(posts(DM)).toHaveLength(1);
    const updates = slack.callsOf('chat.update');
    expect(updates[1].at - updates[0].at).toBeGreaterThanOrEqual(1000);
  });

  it('a 5xx on chat.postMessage is not repeated (it may have landed); the rest of the reply goes on', async () => {
    await start({});
    slack.failNext('chat.postMessage', { status: 503 });
    slack.userMessage({ channel: DM, user: ALICE, im: true, text: 'hello' });
    await until(() => slack.inChannel(DM).some((m) => m.text === 'Hello from the chat agent.'), 'the answer');
    await finished(1);
    // the preview's post failed with a 503 and was not sent again; the answer came as its own message
    expect(posts(DM)).toHaveLength(2);
    expect(h!.host.status()[0].failures).toBe(1);
  });

  it('the same event delivered twice, and an app_mention with its message event, are handled once', async () => {
    await start({});
    const first = slack.userMessage({ channel: DM, user: ALICE, im: true, text: 'hello' });
    await until(() => slack.inChannel(DM).length === 1, 'the answer');
    await finished(1);
    slack.redeliver(first.event_id, first.event);
    const mention = slack.userMessage({ channel: TEAM, user: ALICE, mention: true, text: 'hi team' });
    // the same message again as a plain message event, as Slack sends both when the app subscribes to both
    slack.redeliver('Ev-other', { ...mention.event, type: 'message' });
    await until(() => slack.inChannel(TEAM).length === 1, 'the answer in the channel');
    await finished(2);
    expect((await h!.service.list()).runs).toHaveLength(2);
    await until(() => h!.host.status()[0].duplicates === 2, 'two duplicates counted');
  });

  it('a restart mid-conversation: the reply being streamed is finished after it, not posted again, and the thread goes on', async () => {
    await start(scriptAgent('slow', [{ text: 'never reached', delayMs: 60_000 }]));
    const p = h!.p;
    const { ts } = slack.userMessage({ channel: TEAM, user: ALICE, mention: true, text: '/run slow -- take your time' });
    await until(() => posts(TEAM).length === 1, 'the preview');
    await h!.stop();
    h = null;
    h = await startHarness(p, { SLACK_BOT: slack.botToken, SLACK_APP: slack.appToken });
    await until(() => /cancelled/.test(slack.inChannel(TEAM)[0].text), 'the preview updated with the outcome');
    expect(posts(TEAM)).toHaveLength(1);
    slack.userMessage({ channel: TEAM, user: ALICE, thread_ts: ts, text: 'and now?' });
    await until(() => slack.inChannel(TEAM).some((m) => m.text === 'Hello from the chat agent.'), 'the next answer');
    const runs = (await h.service.list()).runs;
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.conversation_id)).size).toBe(1);
  });

  it('check asks Slack who the bot is and opens Socket Mode with the app token; a wrong token fails without being shown', async () => {
    await start({});
    const config = { bot_token: slack.botToken, app_token: slack.appToken, api_url: slack.apiUrl };
    expect(await slackChannel.check!(config, AbortSignal.timeout(10_000))).toEqual({
      ok: true,
      detail: `bot runtrail (UBOT01) in Fake Team, Socket Mode open, at ${slack.apiUrl}`,
    });
    const bad = await slackChannel.check!({ ...config, app_token: 'xapp-1-A1-wrong-app-token' }, AbortSignal.timeout(10_000));
    expect(bad).toEqual({ ok: false, error: `${slack.apiUrl}: invalid_auth` });
  });
});
