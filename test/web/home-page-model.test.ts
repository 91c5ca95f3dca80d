/** The home page's DOM-free parts: the agent the new-run form opens on, and a schedule fire's chip. */
import { describe, expect, it } from 'vitest';
import { fireChip } from '../../web/src/fire-label.js';
import { mainAgent } from '../../web/src/main-agent.js';

const builtin = (name: string) => ({ name, source: { kind: 'builtin' } });

describe('the new-run form opens on the main agent', () => {
  it("the project's own agent before the builtins, whatever their order", () => {
    const agents = [
      builtin('chat'),
      builtin('feedbacklens'),
      { name: 'mine', source: { kind: 'user' } },
      { name: 'release-notes', source: { kind: 'project' } },
    ];
    expect(mainAgent(agents, 'chat')).toBe('release-notes');
    expect(mainAgent(agents.slice(0, 3), null)).toBe('mine');
  });

  it('with builtins only: the agent of the newest run, else the first listed', () => {
    const agents = [builtin('chat'), builtin('feedbacklens'), builtin('file_summary')];
    expect(mainAgent(agents, 'feedbacklens')).toBe('feedbacklens');
    expect(mainAgent(agents, 'gone')).toBe('chat');
    expect(mainAgent(agents, null)).toBe('chat');
    expect(mainAgent([], null)).toBe('');
  });
});

describe("a schedule fire's chip", () => {
  it('says each outcome once, in words', () => {
    expect(fireChip({ outcome: 'not_started', reason: 'input_outside_roots' })).toEqual({ text: 'not started: input outside roots', status: 'cancelled' });
    expect(fireChip({ outcome: 'skipped', reason: 'backoff' })).toEqual({ text: 'skipped: backoff', status: 'cancelled' });
    expect(fireChip({ outcome: 'not_started' }).text).toBe('not started');
    expect(fireChip({ outcome: 'started', run_id: 'run_1', run_status: 'completed' })).toEqual({ text: 'completed', status: 'completed' });
    expect(fireChip({ outcome: 'waiting' }).text).toBe('waiting');
  });
});
