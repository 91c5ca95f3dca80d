import { describe, expect, it } from 'vitest';
import { PluginRegistry } from '../../src/runtime/plugin-registry.js';
import { notesPlugin } from './fixtures/fake-plugin.js';

describe('PluginRegistry', () => {
  it('finds plugins by name and lists them sorted', () => {
    const a = { ...notesPlugin(), name: 'zeta' };
    const b = notesPlugin();
    const r = new PluginRegistry([a, b]);
    expect(r.names()).toEqual(['notes', 'zeta']);
    expect(r.get('zeta')).toBe(a);
    expect(r.get('nope')).toBeUndefined();
    expect(r.list().map((p) => p.name)).toEqual(['notes', 'zeta']);
  });

  it('refuses duplicates and nameless plugins', () => {
    expect(() => new PluginRegistry([notesPlugin(), notesPlugin()])).toThrow(/already registered/);
    expect(() => new PluginRegistry([{ ...notesPlugin(), name: '' }])).toThrow(/needs a name/);
  });
});
