/** The live preview: a status line over the answer so far, never longer than the channel's limit. */
import { describe, expect, it } from 'vitest';
import { makeAgentEvent } from '../../../src/events/agent-event-factory.js';
import { Diagnosis } from '../../../src/events/diagnosis.js';
import type { AgentEventMap, AgentStream } from '../../../src/events/agent-event.js';
import { ReplyPreview } from '../../../src/server/channel-host/reply-preview.js';

let seq = 0;
const ev = <S extends AgentStream>(stream: S, data: AgentEventMap[S]) => makeAgentEvent('run_1', ++seq, 0, stream, data);

describe('ReplyPreview', () => {
  it('shows what the run does, then the answer under it', () => {
    const p = new ReplyPreview();
    expect(p.text(4096)).toBe('⏳ queued');
    expect(p.apply(ev('run', { type: 'run.state', from: 'queued', to: 'tool_executing' }))).toBe(true);
    p.apply(ev('tool', { phase: 'start', name: 'read_file', toolCallId: 't1', args: {} }));
    expect(p.text(4096)).toBe('⏳ working · read_file');
    p.apply(ev('run', { type: 'run.state', from: 'tool_executing', to: 'model_thinking' }));
    p.apply(ev('assistant', { text: 'Hello', delta: 'Hello' }));
    expect(p.text(4096)).toBe('⏳ writing · read_file\n\nHello');
  });

  it('a long answer shows its end, marked as cut, within the limit; no half of a surrogate pair', () => {
    const p = new ReplyPreview();
    p.apply(ev('assistant', { text: '', delta: `${'x'.repeat(5000)}😀${'y'.repeat(20)}` }));
    const t = p.text(100);
    expect(t.length).toBeLessThanOrEqual(100);
    expect(t).toMatch(/^⏳ queued\n\n…/);
    expect(t.endsWith('y'.repeat(20))).toBe(true);
    for (let limit = 30; limit < 60; limit++) {
      const s = p.text(limit);
      expect(s.length).toBeLessThanOrEqual(limit);
      expect(/[\uDC00-\uDFFF]/.test(s[s.indexOf('…') + 1] ?? '')).toBe(false);
    }
  });

  it('a run resumed after its process died says so, and the text of the turn it redoes is not shown twice', () => {
    const p = new ReplyPreview();
    p.apply(ev('run', { type: 'run.state', from: 'queued', to: 'model_thinking' }));
    p.apply(ev('assistant', { text: 'Looking. ', delta: 'Looking. ' }));
    const redoneFrom = seq + 1;
    p.apply(ev('assistant', { text: 'Looking. The ans', delta: 'The ans' }));
    expect(p.text(4096)).toBe('⏳ writing\n\nLooking. The ans');
    const diagnosis = new Diagnosis({ code: 'resumed', severity: 'warning', summary: 'run resumed from its checkpoint', detail: '', hint: '' }).toDict();
    expect(p.apply(ev('lifecycle', { phase: 'resumed', resumedAt: 0, attempt: 1, fromSeq: 2, discardFromSeq: redoneFrom, diagnosis }))).toBe(true);
    expect(p.text(4096)).toBe('⏳ resumed after a restart · writing\n\nLooking.');
    p.apply(ev('assistant', { text: 'The answer is 42.', delta: 'The answer is 42.' }));
    expect(p.text(4096)).toBe('⏳ resumed after a restart · writing\n\nLooking. The answer is 42.');
    p.apply(ev('lifecycle', { phase: 'resumed', resumedAt: 0, attempt: 2, fromSeq: 9, discardFromSeq: null, diagnosis }));
    expect(p.text(4096)).toBe('⏳ resumed after a restart (2 times) · writing\n\nLooking. The answer is 42.');
  });
});
