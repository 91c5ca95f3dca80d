import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../../src/extensions/markdown-agent.js';
import { problemLine } from '../../src/extensions/definition-problem.js';
import { agentFile, NOTES_AGENT } from './project-fixture.js';

const FILE = '/p/.runtrail/agents/notes.md';
const SHOWN = '.runtrail/agents/notes.md';
const lines = (text: string, file = FILE) => {
  const r = parseAgentFile(file, text, SHOWN);
  return r.ok ? [] : r.problems.map(problemLine);
};

describe('Markdown agent files', () => {
  it('parse into a definition with defaults filled', () => {
    const r = parseAgentFile(FILE, NOTES_AGENT, SHOWN);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.agent).toMatchObject({
      name: 'notes',
      version: '1.2.0',
      tools: ['read_file', 'write_artifact', 'list_artifacts'],
      skills: [],
      instructions: 'You do the task with the tools you have.',
    });
    expect(r.agent.artifacts.map((a) => [a.path, a.type, a.required, a.requiredHeadings])).toEqual([
      ['NOTES.md', 'markdown', true, ['Highlights', 'Fixes']],
      ['notes.json', 'json', true, undefined],
    ]);
  });

  it('default the tools, the version and the input', () => {
    const r = parseAgentFile('/p/a/x.md', agentFile('name: x\ndescription: d'), 'x.md');
    expect(r.ok && [r.agent.tools, r.agent.version, r.agent.input]).toEqual([['read_file', 'write_artifact', 'list_artifacts'], '0.0.0', { type: 'object' }]);
  });

  it('refuse frontmatter that is not YAML, naming the file and the line', () => {
    expect(lines('---\nname: notes\ntools: [read_file\n---\nbody\n')).toEqual([
      expect.stringMatching(/^\.runtrail\/agents\/notes\.md: frontmatter is not valid YAML \(line \d\): /),
    ]);
  });

  it('refuse a file without frontmatter', () => {
    expect(lines('just instructions\n')[0]).toMatch(/starts with YAML frontmatter/);
  });

  it('refuse a missing name and a missing description', () => {
    expect(lines(agentFile('description: d'))).toEqual(['.runtrail/agents/notes.md: name: is required']);
    expect(lines(agentFile('name: notes'))).toEqual(['.runtrail/agents/notes.md: description: is required']);
  });

  it('refuse a name that differs from the file name, or is not a-z, 0-9, -', () => {
    expect(lines(agentFile('name: other\ndescription: d'))).toEqual(['.runtrail/agents/notes.md: name: must equal the file name "notes", got "other"']);
    expect(lines(agentFile('name: Notes_1\ndescription: d'))[0]).toMatch(/^\.runtrail\/agents\/notes\.md: name: must match pattern/);
  });

  it('name the field path and the allowed values of a wrong artifact type', () => {
    const text = agentFile('name: notes\ndescription: d\nartifacts:\n  - path: a.md\n  - path: b.txt\n    type: pdf');
    expect(lines(text)).toEqual(['.runtrail/agents/notes.md: artifacts[1].type: must be one of markdown, json, text, csv']);
  });

  it('refuse an artifact path that escapes artifacts/', () => {
    for (const p of ['../secret.md', '/etc/passwd', 'a/../../b.md']) {
      expect(lines(agentFile(`name: notes\ndescription: d\nartifacts:\n  - path: "${p}"`))[0]).toMatch(
        /artifacts\[0\]\.path: must (stay inside artifacts\/|be relative)/,
      );
    }
  });

  it('refuse a schema that is not valid JSON Schema, for the input and for an artifact', () => {
    expect(lines(agentFile('name: notes\ndescription: d\ninput: { type: object, properties: { a: { type: strng } } }'))[0]).toMatch(
      /^\.runtrail\/agents\/notes\.md: input: not a valid JSON Schema: /,
    );
    expect(lines(agentFile('name: notes\ndescription: d\nartifacts:\n  - path: a.json\n    schema: { type: object, required: nope }'))[0]).toMatch(
      /artifacts\[0\]\.schema: not a valid JSON Schema/,
    );
  });

  it('refuse unknown fields and a plan naming a tool the agent lacks', () => {
    expect(lines(agentFile('name: notes\ndescription: d\ntool: [read_file]'))).toEqual([
      '.runtrail/agents/notes.md: tool: is not a known field (did you mean tools?)',
    ]);
    expect(lines(agentFile('name: notes\ndescription: d\nplan:\n  - { id: s, title: S, tools: [exec] }'))[0]).toMatch(
      /plan\[0\]\.tools: "exec" is not in the agent's tools/,
    );
  });

  it('refuse duplicate keys and a second artifact with the same path', () => {
    expect(lines('---\nname: notes\nname: notes\ndescription: d\n---\nb\n')[0]).toMatch(/Map keys must be unique/);
    expect(lines(agentFile('name: notes\ndescription: d\nartifacts:\n  - path: a.md\n  - path: artifacts/a.md'))[0]).toMatch(
      /artifacts\[1\]\.path: a\.md is declared twice/,
    );
  });
});
