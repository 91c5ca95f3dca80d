import { describe, expect, it } from 'vitest';
import { progressBar, TerminalAdapter } from '../../src/channels/terminal-adapter.js';
import { createEngineBridge } from '../../src/events/engine-bridge.js';
import { makeDelta, makeError, makeProcess, makeStep } from '../../src/events/engine-event.js';
import { makeProcessEvent } from '../../src/events/process-event-factory.js';
import { sampleRun } from '../events/sample-run.js';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { stream: { write: (s: string) => chunks.push(s), isTTY, columns: 80 }, text: () => chunks.join(''), chunks };
}

const pe = (status: 'running' | 'completed' | 'failed', current?: number) =>
  makeProcessEvent({ operationId: 'op', targetType: 'skill', source: 'skill', stage: 'detect', status, current, total: 4 }, () => 0);

describe('TerminalAdapter', () => {
  it('a resumed run: one line says so, that the partial answer printed above is void, and what was redone', () => {
    const out = sink(false);
    const t = new TerminalAdapter({ stream: out.stream, log: () => {} });
    t.emit(makeDelta('The answer is'));
    t.emit(
      makeStep('agent', {
        name: 'resume',
        args: { attempt: 1, from_seq: 3, discard_from_seq: 4 },
        result: 'run resumed from its checkpoint (attempt 1) after its process stopped',
        phase: 'ok',
        index: 1,
        diagnosis: { code: 'resumed', severity: 'warning', summary: 'run resumed', detail: '1 model turn redone' },
      }),
    );
    t.emit(makeDelta('The answer is 42.'));
    expect(out.text()).toBe(
      'The answer is\n↺ run resumed from its checkpoint (attempt 1) after its process stopped — the partial answer above is discarded and redone\n  1 model turn redone\nThe answer is 42.',
    );
  });

  it('plain output: live text, one ✓/✗ line per finished step, plain process lines', () => {
    const out = sink(false);
    const t = new TerminalAdapter({ stream: out.stream, log: () => {} });
    const bridge = createEngineBridge({ traceId: 'r' });
    for (const ev of sampleRun()) {
      const e = bridge.translate(ev);
      if (e) t.emit(e);
    }
    expect(out.text()).toBe(
      [
        'Hello, 世界',
        '  [running] 50% op — ',
        '✗ run_skill — skill crashed',
        '  exit 3',
        '✓ csv_profile — 12 rows',
        '✗ stop_validation — stop_validator blocked the run from finishing',
        '  - report.md missing',
        '  - summary empty',
        'Done.',
        '',
      ]
        .join('\n')
        .replace('op — ', 'op'),
    );
    expect(out.text()).not.toContain('\x1b[');
  });

  it('TTY: draws a progress bar in place and clears it before the next output', () => {
    const out = sink(true);
    const t = new TerminalAdapter({ stream: out.stream, color: false, log: () => {} });
    t.emit(makeDelta('Working'));
    t.emit(makeProcess(pe('running', 1)));
    t.emit(makeProcess(pe('running', 2)));
    t.emit(makeProcess(pe('completed', 4)));
    t.emit(makeStep('tool', { name: 'x', phase: 'ok', result: 'fine', index: 0 }));
    expect(out.chunks).toEqual(['Working', '\n', `  ${progressBar(25)} op detect`, '\r\x1b[2K', `  ${progressBar(50)} op detect`, '\r\x1b[2K', '✓ x — fine\n']);
  });

  it('errors print their diagnosis and hint', () => {
    const out = sink(false);
    const t = new TerminalAdapter({ stream: out.stream, log: () => {} });
    t.emit(makeError('boom', { diagnosis: { code: 'c', severity: 'error', summary: 'model unreachable', detail: 'ECONNREFUSED', hint: 'start ollama' } }));
    expect(out.text()).toBe('✗ model unreachable\n  ECONNREFUSED\n  hint: start ollama\n');
  });

  it('progressBar clamps and pads', () => {
    expect(progressBar(150, 4)).toBe('[████] 100%');
    expect(progressBar(-3, 4)).toBe('[░░░░]   0%');
  });

  it('a broken stream never throws into the engine', () => {
    const t = new TerminalAdapter({
      stream: {
        write: () => {
          throw new Error('EPIPE');
        },
      },
      log: () => {},
    });
    expect(t.emit(makeDelta('x'))).toBe(false);
    expect(t.stats.errors).toBe(1);
  });
});
