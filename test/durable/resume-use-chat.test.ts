/**
 * A `useChat` client (the AI SDK's own transport and stream reader) of a run whose `serve` was
 * killed with SIGKILL while the model's answer streamed: after the restart the run is resumed and
 * the turn redone; the client that reconnects reads one answer, not the cut one beside it.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { checkEventLog, durableProject, killHard, MAIN, runEvents, type DurableProject, serve } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

const textOf = (m: UIMessage) => m.parts.flatMap((x) => (x.type === 'text' ? [x.text] : []));

describe.runIf(existsSync(MAIN))('a useChat client of a run whose serve was killed mid-answer', () => {
  it('reads the redone answer once after the restart: the cut partial text is not in its message', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `part${i} `).join('');
    p = durableProject([
      { text: long, chunkDelayMs: 100, toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nok\n' } }] },
      { text: 'report written' },
    ]);
    const first = await serve(p.dir, children);
    const ctrl = new AbortController();
    const stream = await new DefaultChatTransport({ api: `${first.url}/api/chat?plugin=worker` }).sendMessages({
      chatId: 'kept-chat',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'write the report' }] }],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: ctrl.signal,
    });
    let seen = '';
    let runId = '';
    try {
      for await (const m of readUIMessageStream({ stream })) {
        runId = m.id;
        seen = textOf(m).join('');
        if (seen.includes('part3')) {
          await killHard(first.child);
          break;
        }
      }
    } catch {
      // the connection the kill cut
    }
    ctrl.abort();
    expect(seen).toContain('part3');
    expect(seen).not.toContain('part29');

    const second = await serve(p.dir, children);
    const again = await new DefaultChatTransport({ api: `${second.url}/api/chat?plugin=worker` }).reconnectToStream({ chatId: 'kept-chat' });
    expect(again).not.toBeNull();
    let last: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: again! })) last = m;
    expect(last!.id).toBe(runId);
    // the redone turn's text, then the final answer: the cut partial text is not a part of its own
    expect(textOf(last!)).toEqual([long, 'report written']);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    const resumed = events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect((resumed?.data as { discardFromSeq: number | null }).discardFromSeq).not.toBeNull();
  }, 120_000);
});
