import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/events/agent-event.js';
import { RunStateError, RunStateMachine, canTransition } from '../../src/runtime/run-state-machine.js';

describe('RunStateMachine', () => {
  it('walks the documented path and reports each change', () => {
    const seen: Array<[RunStatus | null, RunStatus]> = [];
    const m = new RunStateMachine('queued', (f, t) => seen.push([f, t]));
    for (const s of ['created', 'planning', 'model_thinking', 'tool_executing', 'model_thinking', 'validating', 'completed'] as RunStatus[]) m.transition(s);
    expect(seen.map(([, t]) => t)).toEqual(['created', 'planning', 'model_thinking', 'tool_executing', 'model_thinking', 'validating', 'completed']);
    expect(m.isTerminal).toBe(true);
    expect(Object.keys(m.durations)).toContain('model_thinking');
  });

  it('refuses transitions the table does not have', () => {
    const m = new RunStateMachine('queued');
    expect(() => m.transition('planning')).toThrow(RunStateError);
    expect(() => m.transition('completed')).toThrow(/queued → completed/);
    expect(canTransition('tool_executing', 'validating')).toBe(false);
    expect(canTransition('planning', 'tool_executing')).toBe(false);
    expect(canTransition('created', 'model_thinking')).toBe(false);
  });

  it('cancelled from any live state, nothing after a terminal state', () => {
    for (const s of ['queued', 'created', 'planning', 'model_thinking', 'tool_executing', 'validating'] as RunStatus[]) {
      expect(canTransition(s, 'cancelled')).toBe(true);
    }
    for (const s of ['completed', 'failed', 'cancelled'] as RunStatus[]) {
      expect(canTransition(s, 'cancelled')).toBe(false);
      expect(canTransition(s, 'failed')).toBe(false);
    }
    const m = new RunStateMachine('queued');
    m.transition('cancelled');
    expect(m.tryTransition('created')).toBe(false);
    expect(m.state).toBe('cancelled');
  });

  it('a resumed attempt enters the state its first step implies from any live status, once, before any other move', () => {
    for (const from of ['queued', 'created', 'planning', 'model_thinking', 'tool_executing', 'awaiting_approval', 'validating'] as RunStatus[]) {
      for (const to of ['model_thinking', 'tool_executing', 'validating'] as const) {
        const seen: Array<[RunStatus | null, RunStatus]> = [];
        const m = new RunStateMachine(from, (f, t) => seen.push([f, t]));
        m.enterResumed(to);
        expect(m.state).toBe(to);
        expect(seen).toEqual(from === to ? [] : [[from, to]]);
        // the entry is the first move only: after it the table rules again
        expect(() => m.enterResumed(to)).toThrow(RunStateError);
      }
    }
    // a live run cannot use the entry to skip the table once it has moved
    const live = new RunStateMachine('queued');
    live.transition('created');
    live.transition('planning');
    expect(() => live.enterResumed('tool_executing')).toThrow(/planning → tool_executing/);
    expect(() => live.transition('tool_executing')).toThrow(RunStateError);
    // nothing resumes a run that ended, and no resumed attempt begins before its loop
    expect(() => new RunStateMachine('failed').enterResumed('model_thinking')).toThrow(RunStateError);
    expect(() => new RunStateMachine('planning').enterResumed('created' as never)).toThrow(RunStateError);
  });
});
