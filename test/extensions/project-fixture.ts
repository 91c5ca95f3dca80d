/** Project folders the tests make: files under a temp dir, removed after. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface ProjectFixture {
  dir: string;
  write(rel: string, text: string): string;
  cleanup(): void;
}

export function makeProject(files: Record<string, string> = {}): ProjectFixture {
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-project-'));
  const write = (rel: string, text: string) => {
    const abs = join(dir, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
    return abs;
  };
  for (const [rel, text] of Object.entries(files)) write(rel, text);
  return { dir, write, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A Markdown agent file: frontmatter lines (YAML) and a body. */
export function agentFile(frontmatter: string, body = 'You do the task with the tools you have.'): string {
  return `---\n${frontmatter.trim()}\n---\n${body}\n`;
}

export const NOTES_AGENT = agentFile(`
name: notes
description: Write notes from the input
version: 1.2.0
goal: Write the notes
tools: [read_file, write_artifact, list_artifacts]
input:
  type: object
  properties:
    changes: { type: string, format: file }
  required: [changes]
  additionalProperties: false
artifacts:
  - path: NOTES.md
    type: markdown
    headings: [Highlights, Fixes]
    description: the notes
  - path: notes.json
    type: json
    schema: { type: object, required: [version, items], properties: { version: { type: string }, items: { type: array } } }
`);
