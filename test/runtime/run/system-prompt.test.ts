import { describe, expect, it } from 'vitest';
import { resolveCapabilities } from '../../../src/runtime/run/run-capabilities.js';
import { SYSTEM_PROMPT_SECTIONS, buildSystemPrompt } from '../../../src/runtime/run/system-prompt.js';
import { notesPlugin } from '../fixtures/fake-plugin.js';

describe('capabilities and system prompt', () => {
  const plugin = notesPlugin();
  const skill = {
    name: 'notes_skill',
    version: '0.1.0',
    compatible_plugins: ['notes'],
    required_tools: [],
    required_inputs: [],
    output_artifacts: [],
    read_scopes: ['input'],
    write_scopes: ['artifacts/reports'],
  };
  const caps = resolveCapabilities({ plugin, skill, toolNames: ['read_notes', 'write_md', 'read_notes'] });

  it('snapshots plugin, skill, tools, roots and the artifact contract', () => {
    expect(caps).toMatchObject({
      plugin: { name: 'notes', version: '1.2.3' },
      skill: { name: 'notes_skill', version: '0.1.0' },
      allowedTools: ['read_notes', 'write_md'],
      readRoots: ['input'],
      writeRoots: ['artifacts/reports'],
    });
    expect(caps.artifactContract.map((a) => [a.path, a.hasSchema])).toEqual([
      ['count.json', true],
      ['report.md', false],
    ]);
  });

  it('has the documented sections in order, with goal, input, tools, boundaries, outputs and the skill method', () => {
    const p = buildSystemPrompt({
      plugin,
      goal: 'Count the notes.',
      input: { notes_path: 'input/notes.txt' },
      tools: [{ name: 'read_notes', description: 'Read the notes file.', inputSchema: {} }],
      capabilities: caps,
      skill: { name: 'notes_skill', version: '0.1.0', instructions: 'Read first.' },
    });
    const at = SYSTEM_PROMPT_SECTIONS.map((s) => p.indexOf(`## ${s}`));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const s of [
      'Count the notes.',
      '"notes_path": "input/notes.txt"',
      '`read_notes`: Read the notes file.',
      '`artifacts/reports/`',
      '`artifacts/report.md` (markdown, required)',
      'Headings: "Summary"',
      'Read first.',
      'Cite real lines.',
    ]) {
      expect(p).toContain(s);
    }
  });
});
