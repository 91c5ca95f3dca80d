/**
 * The Telegram channel end to end: Runtrail's server side (registry, RunService, ChannelHost, the
 * builtin channel over grammY) against our own Bot API server on loopback, pointed at by `api_root`.
 * Each test asserts the requests Runtrail makes, as Telegram would see them.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTelegram, type TgMessage } from './fakes/fake-telegram.js';
import { project, scriptAgent, startHarness, type Harness } from './channel-harness.js';
import { eventually } from '../tools/helpers.js';

const ALICE = 555;
const MALLORY = 999;
const GROUP = -100777;

let tg: FakeTelegram;
let h: Harness | null = null;
afterEach(async () => {
  await h?.stop();
  h?.p.cleanup();
  h = null;
  await tg?.stop();
});

function channels(extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    telegram: {
      token: '${TEST_TG_TOKEN}',
      api_root: tg.url,
      allow_from: [ALICE, GROUP],
      default_agent: 'chat',
      poll_timeout_s: 1,
      edit_interval_ms: 200,
      group_edit_interval_ms: 400,
      ...extra,
    },
  });
}

async function start(files: Record<string, string>, extra: Record<string, unknown> = {}): Promise<Harness> {
  tg = new FakeTelegram();
  await tg.start();
  const p = project({ '.runtrail/channels.json': channels(extra), ...scriptAgent('chat', [{ text: 'Hello! I am the chat agent.' }]), ...files });
  h = await startHarness(p, { TEST_TG_TOKEN: tg.token });
  expect(h.registry.problems.filter((x) => x.level === 'error')).toEqual([]);
  return h;
}

const fences = (s: string) => (s.match(/^```/gm) ?? []).length;
const sends = (chat: number) => tg.calls('sendMessage').filter((r) => Number(r.params.chat_id) === chat);
const edits = (chat: number, messageId?: number) =>
  tg.calls('editMessageText').filter((r) => Number(r.params.chat_id) === chat && (messageId === undefined || Number(r.params.message_id) === messageId));

async function until(pred: () => boolean, what: string, ms = 30_000): Promise<void> {
  if (!(await eventually(pred, ms)))
    throw new Error(
      `timed out waiting for ${what}; requests: ${JSON.stringify(tg.requests.filter((r) => r.method !== 'getUpdates').map((r) => [r.method, r.params.text ?? r.params.data ?? '']))}\nlog: ${h?.logs.join('\n')}`,
    );
}

async function finished(runs: number): Promise<void> {
  await until(() => h!.host.status()[0].live_replies === 0 && h!.host.status()[0].messages_in >= runs, 'the replies to finish');
}

// Each test starts a server, a fake service and a long connection; under a loaded CI the first one
// also pays the SDK's import, so the waits inside (30 s) must fit within the test's own time.
describe('Telegram channel', { timeout: 90_000 }, () => {
  it('a /run from an allowed user: one message posted at the start, edited in place as the answer streams, ending as the answer', async () => {
    const answer = 'The answer comes in many small words, so that the preview is edited while it streams in.';
    await start(scriptAgent('writer', [{ text: answer, chunkDelayMs: 40 }]));
    const { message_id } = tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run writer -- tell me' });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text === answer), 'the answer');
    await finished(1);
    // one message only: the preview, a reply to the person's message, that became the answer
    expect(sends(ALICE)).toHaveLength(1);
    const preview = sends(ALICE)[0];
    expect(String(preview.params.text)).toMatch(/^⏳/);
    expect((preview.params.reply_parameters as { message_id: number }).message_id).toBe(message_id);
    const posted = tg.messagesIn(ALICE);
    expect(posted).toHaveLength(1);
    expect(posted[0].text).toBe(answer);
    // previews showed the text growing, under a status line, before the final edit
    const texts = edits(ALICE, posted[0].message_id).map((r) => String(r.params.text));
    expect(texts.length).toBeGreaterThanOrEqual(3);
    expect(texts.slice(0, -1).some((t) => t.startsWith('⏳') && t.includes('The answer comes'))).toBe(true);
    expect(texts.at(-1)).toBe(answer);
    // never more often than the configured interval (200 ms in a private chat)
    const at = edits(ALICE).map((r) => r.at);
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(190);
    const run = (await h!.service.list()).runs[0];
    expect(run).toMatchObject({ plugin: 'writer', status: 'completed', conversation_id: `telegram:${ALICE}` });
    expect(h!.host.status()[0]).toMatchObject({ connected: true, messages_in: 1, messages_out: 1, refused: 0, duplicates: 0 });
  });

  it('plain text goes to default_agent; /help and /runs answer from the IM layer', async () => {
    await start({});
    tg.userMessage({ chatId: ALICE, from: ALICE, text: 'hello bot' });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text === 'Hello! I am the chat agent.'), 'the chat answer');
    await finished(1);
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/help' });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text?.includes('/run <plugin>')), 'the help');
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/runs' });
    await until(() => tg.messagesIn(ALICE).some((m) => /run_\d{8}_\d{6}_\d+ · chat · completed/.test(m.text ?? '')), 'the run list');
  });

  it('a long answer is split at 4,096 characters: the first part in the preview, the rest as new messages, code fences closed and reopened', async () => {
    const code = '```python\n' + Array.from({ length: 260 }, (_, i) => `value_${i} = compute(${i}) * factor  # line ${i}`).join('\n') + '\n```';
    const long = `Here is the script.\n\n${code}\n\nThat is all of it.`;
    expect(long.length).toBeGreaterThan(9000);
    await start(scriptAgent('coder', [{ text: long }]));
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run coder -- write it' });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text?.endsWith('That is all of it.')), 'the last part');
    await finished(1);
    const posted = tg.messagesIn(ALICE);
    expect(posted.length).toBeGreaterThanOrEqual(3);
    for (const m of posted) {
      expect(m.text!.length).toBeLessThanOrEqual(4096);
      expect(fences(m.text!) % 2).toBe(0);
    }
    // the preview (posted first) holds part 1; every part was posted once
    expect(posted[0].text!.startsWith('Here is the script.')).toBe(true);
    expect(sends(ALICE)).toHaveLength(posted.length);
    const body = posted.map((m) => m.text!).join('\n');
    for (const i of [0, 130, 259]) expect(body).toContain(`value_${i} = compute(${i}) * factor  # line ${i}`);
    expect(body.match(/^```python$/gm)!.length).toBe(posted.filter((m) => m.text!.includes('value_')).length);
  });

  it("sends the run's artifacts as files, named as in the manifest", async () => {
    await start(
      scriptAgent('reporter', [
        { toolCalls: [{ name: 'write_artifact', args: { path: 'weekly_report.md', content: '# Weekly report\n\nAll good.\n' } }] },
        { text: 'The report is attached.' },
      ]),
    );
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run reporter -- report' });
    await until(() => tg.calls('sendDocument').length === 1, 'the document');
    await finished(1);
    const doc = tg.calls('sendDocument')[0];
    expect(Number(doc.params.chat_id)).toBe(ALICE);
    expect(doc.file).toMatchObject({ name: 'weekly_report.md', text: '# Weekly report\n\nAll good.\n' });
    expect(tg.messagesIn(ALICE).map((m) => m.text ?? m.document?.file_name)).toEqual(['The report is attached.', 'weekly_report.md']);
  });

  it('an approval is two buttons; a stranger\'s press is "not allowed" and decides nothing; the allowed user\'s press decides as that person', async () => {
    await start(
      scriptAgent(
        'careful',
        [{ toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] }, { text: 'Written.' }],
        'permissions: { write_artifact: ask }',
      ),
      { allow_from: [ALICE, GROUP] },
    );
    tg.userMessage({ chatId: GROUP, from: ALICE, group: true, mention: true, text: '/run careful -- write' });
    let ask: TgMessage | undefined;
    await until(() => (ask = tg.messagesIn(GROUP).find((m) => m.reply_markup)) !== undefined, 'the approval buttons');
    const keyboard = (ask!.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard;
    expect(keyboard[0].map((b) => b.text)).toEqual(['Approve', 'Deny']);
    const approve = keyboard[0][0].callback_data;
    expect(approve).toMatch(/^\/approve apr_[0-9a-f]+$/);

    tg.press({ chatId: GROUP, from: MALLORY, group: true, messageId: ask!.message_id, data: approve });
    await until(() => tg.calls('answerCallbackQuery').length === 1, 'the answer to the stranger');
    expect(String(tg.calls('answerCallbackQuery')[0].params.text)).toMatch(/^Not allowed/);
    const run = (await h!.service.list()).runs[0];
    expect((await h!.service.get(run.run_id))!.status).toBe('awaiting_approval');
    expect(h!.service.pendingApprovals(run.run_id)).toHaveLength(1);

    tg.press({ chatId: GROUP, from: ALICE, group: true, messageId: ask!.message_id, data: approve });
    await until(() => tg.calls('answerCallbackQuery').length === 2, 'the answer to the approver');
    expect(String(tg.calls('answerCallbackQuery')[1].params.text)).toMatch(/^Approved write_artifact/);
    await until(() => tg.messagesIn(GROUP).some((m) => m.text === 'Written.'), 'the answer');
    await finished(2);
    const decided = tg.messagesIn(GROUP).find((m) => m.message_id === ask!.message_id)!;
    expect(decided.text).toMatch(/^✅ write_artifact approved by telegram:555 \(@user555\)/);
    expect(decided.reply_markup).toBeUndefined();
    const events = await h!.service.wait(run.run_id);
    expect(events.status).toBe('completed');
    expect(h!.host.status()[0].refused).toBe(1);
  });

  it('a sender not in allow_from gets one polite refusal and nothing runs; a group not listed is refused too', async () => {
    await start({}, { allow_from: [ALICE] });
    tg.userMessage({ chatId: MALLORY, from: MALLORY, text: '/run chat -- hi' });
    await until(() => tg.messagesIn(MALLORY).length === 1, 'the refusal');
    expect(tg.messagesIn(MALLORY)[0].text).toMatch(/^Sorry, this bot does not take requests from you: your id \(999\) is not in allow_from/);
    tg.userMessage({ chatId: MALLORY, from: MALLORY, text: 'please' });
    // the allowed user's own group is not listed: the group is refused, though the sender is allowed
    tg.userMessage({ chatId: -100123, from: ALICE, group: true, mention: true, text: 'hi' });
    await until(() => tg.messagesIn(-100123).length === 1, 'the group refusal');
    expect(tg.messagesIn(-100123)[0].text).toMatch(/this group \(-100123\) is not in allow_from/);
    await until(() => h!.host.status()[0].refused === 3, 'three refusals counted');
    expect(tg.messagesIn(MALLORY)).toHaveLength(1);
    expect((await h!.service.list()).runs).toEqual([]);
  });

  it('in a group the bot answers only when mentioned or replied to', async () => {
    await start({});
    tg.userMessage({ chatId: GROUP, from: ALICE, group: true, text: 'talking among ourselves' });
    tg.userMessage({ chatId: GROUP, from: ALICE, group: true, mention: true, text: 'hello' });
    await until(() => tg.messagesIn(GROUP).some((m) => m.text === 'Hello! I am the chat agent.'), 'the answer to the mention');
    await finished(1);
    const answer = tg.messagesIn(GROUP)[0];
    tg.userMessage({ chatId: GROUP, from: ALICE, group: true, text: 'and again', replyTo: answer.message_id });
    await until(() => tg.messagesIn(GROUP).length === 2, 'the answer to the reply');
    await finished(2);
    expect((await h!.service.list()).runs.map((r) => r.goal).sort()).toEqual(['and again', 'hello']);
  });

  it('a 429 on an edit is waited out as asked, and the answer still arrives without a second message', async () => {
    const answer = 'Slow and steady words arrive one after another in this answer.';
    await start(scriptAgent('writer', [{ text: answer, chunkDelayMs: 50 }]));
    tg.failNext('editMessageText', { error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } });
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run writer -- go' });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text === answer), 'the answer');
    await finished(1);
    expect(sends(ALICE)).toHaveLength(1);
    expect(tg.messagesIn(ALICE)).toHaveLength(1);
    const all = edits(ALICE);
    const refusedAt = all[0].at;
    // the next edit came no sooner than retry_after said
    expect(all[1].at - refusedAt).toBeGreaterThanOrEqual(1000);
    expect(h!.host.status()[0].retries).toBeGreaterThanOrEqual(1);
  });

  it('a 429 on the message that carries the answer is retried after retry_after; the part is posted once', async () => {
    const code = '```\n' + 'x = 1\n'.repeat(900) + '```';
    await start(scriptAgent('coder', [{ text: code }]));
    tg.failNext('sendMessage', { error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } }, 1);
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run coder -- go' });
    await until(() => h!.host.status()[0].messages_out >= 2 && h!.host.status()[0].live_replies === 0, 'the parts');
    // the preview's send was refused once, then posted; the second part posted once
    const posted = tg.messagesIn(ALICE);
    expect(posted).toHaveLength(2);
    expect(sends(ALICE)).toHaveLength(3);
    expect(sends(ALICE)[1].at - sends(ALICE)[0].at).toBeGreaterThanOrEqual(1000);
    expect(
      posted
        .map((m) => m.text)
        .join('\n')
        .match(/x = 1/g),
    ).toHaveLength(900);
  });

  it('the same update delivered twice is handled once', async () => {
    await start({});
    const { update_id } = tg.userMessage({ chatId: ALICE, from: ALICE, text: 'hello' });
    await until(() => tg.messagesIn(ALICE).length === 1, 'the answer');
    await finished(1);
    tg.redeliver(update_id, tg.updateBody(update_id));
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/runs' });
    await until(() => tg.messagesIn(ALICE).length === 2, 'the /runs answer');
    expect((await h!.service.list()).runs).toHaveLength(1);
    expect(h!.host.status()[0].duplicates).toBe(1);
  });

  it("a file sent with /run becomes the agent's file input, from the upload folder", async () => {
    await start({
      '.runtrail/agents/reader.md':
        '---\nname: reader\ndescription: reads a file\nmodel: script:reader.turns.json\ntools: [read_file]\ninput:\n  type: object\n  properties:\n    doc: { type: string, format: file }\n  required: [doc]\n---\nRead the file.\n',
      '.runtrail/agents/reader.turns.json': JSON.stringify([{ text: 'Read it.' }]),
    });
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run reader -- read this', document: { name: 'sales.csv', content: 'region,total\nnorth,12\n' } });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text === 'Read it.'), 'the answer');
    const run = (await h!.service.list()).runs[0];
    const req = JSON.parse(readFileSync(join(h!.dataDir, 'runs', run.run_id, 'input', 'request.json'), 'utf8')) as { input: { doc: string } };
    expect(req.input.doc).toMatch(/sales\.csv$/);
    const copied = readdirSync(join(h!.dataDir, 'runs', run.run_id, 'input')).find((f) => f.endsWith('sales.csv'))!;
    expect(readFileSync(join(h!.dataDir, 'runs', run.run_id, 'input', copied), 'utf8')).toBe('region,total\nnorth,12\n');
    expect(tg.calls('getFile')).toHaveLength(1);
  });

  it('a run from a chat cannot read a file outside the upload folder', async () => {
    await start({
      '.runtrail/agents/reader.md':
        '---\nname: reader\ndescription: reads a file\nmodel: script:reader.turns.json\ninput:\n  type: object\n  properties:\n    doc: { type: string, format: file }\n---\nRead.\n',
      '.runtrail/agents/reader.turns.json': JSON.stringify([{ text: 'x' }]),
    });
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run reader doc=/etc/passwd -- read' });
    await until(() => tg.messagesIn(ALICE).length === 1, 'the refusal');
    expect(tg.messagesIn(ALICE)[0].text).toMatch(/Cannot start reader: input\.doc: file must be under the input roots/);
    expect((await h!.service.list()).runs).toEqual([]);
  });

  it('agents: [...] limits what the chat may start', async () => {
    await start(scriptAgent('writer', [{ text: 'w' }]), { agents: ['chat'] });
    tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run writer -- go' });
    await until(() => tg.messagesIn(ALICE).length === 1, 'the refusal');
    expect(tg.messagesIn(ALICE)[0].text).toBe('writer cannot be started from this chat (allowed here: chat).');
    expect((await h!.service.list()).runs).toEqual([]);
  });

  it('a restart mid-conversation: the reply being streamed is finished after it (edited, not posted again), an update seen before is not handled again, and the chat goes on', async () => {
    await start(scriptAgent('slow', [{ text: 'never reached', delayMs: 60_000 }]));
    const p = h!.p;
    const first = tg.userMessage({ chatId: ALICE, from: ALICE, text: '/run slow -- take your time' });
    await until(() => sends(ALICE).length === 1, 'the preview');
    const runId = (await h!.service.list()).runs[0].run_id;
    // the host stops first (the reply stays unfinished on disk), then the service cancels the run
    await h!.stop();
    h = null;
    // as if the process died after taking the update and before its offset was saved: Telegram delivers it again
    writeFileSync(join(p.dir, '.runtrail', 'channels', 'telegram', 'store.json'), '{}');
    tg.redeliver(first.update_id, tg.updateBody(first.update_id));
    h = await startHarness(p, { TEST_TG_TOKEN: tg.token });
    await until(() => /cancelled/.test(tg.messagesIn(ALICE)[0].text ?? ''), 'the preview edited into the outcome');
    expect(tg.messagesIn(ALICE)[0].text).not.toMatch(/^⏳/);
    expect(sends(ALICE)).toHaveLength(1);
    tg.userMessage({ chatId: ALICE, from: ALICE, text: 'and now?' });
    await until(() => tg.messagesIn(ALICE).some((m) => m.text === 'Hello! I am the chat agent.'), 'the next answer');
    await finished(1);
    const runs = (await h.service.list()).runs;
    expect(runs.map((r) => r.run_id)).toContain(runId);
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.conversation_id))).toEqual(new Set([`telegram:${ALICE}`]));
    expect(h.host.status()[0].duplicates).toBe(1);
  });
});
