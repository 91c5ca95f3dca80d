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
});
