import { describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/agent-registry.js';
import { notesPlugin } from './fixtures/fake-plugin.js';

describe('AgentRegistry', () => {
  it('finds plugins by name and lists them sorted', () => {
    const a = { ...notesPlugin(), name: 'zeta' };
    const b = notesPlugin();
    const r = new AgentRegistry([a, b]);
    expect(r.names()).toEqual(['notes', 'zeta']);
    expect(r.get('zeta')).toBe(a);
    expect(r.get('nope')).toBeUndefined();
    expect(r.list().map((p) => p.name)).toEqual(['notes', 'zeta']);
  });

  it('refuses duplicates and nameless plugins', () => {
    expect(() => new AgentRegistry([notesPlugin(), notesPlugin()])).toThrow(/already registered/);
    expect(() => new AgentRegistry([{ ...notesPlugin(), name: '' }])).toThrow(/needs a name/);
  });
});
