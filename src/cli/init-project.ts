/**
 * `runtrail init [DIR]`: a small project that runs to completion offline — a Markdown agent with an
 * artifact contract, an Agent Skill, a code plugin with one tool, and the script model it runs with.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { shellWord } from './runtrail-command.js';

export const INIT_AGENT = 'notes-report';

const AGENT = `---
name: notes-report
description: Count the words of a notes file and write a short report about it
version: 0.1.0
# the scripted model of this example (a file next to this one); use a real one with --model
model: script:notes-report.turns.json
goal: Report how long the notes are and which words they use most
tools: [read_file, write_artifact, list_artifacts, count_words]
skills: [house-style]
input:
  type: object
  properties:
    notes: { type: string, format: file, description: the notes file to report on }
  required: [notes]
  additionalProperties: false
artifacts:
  - path: REPORT.md
    type: markdown
    headings: [Summary, Top words]
    description: the report
  - path: word_counts.json
    type: json
    description: the word counts, written by count_words
    schema:
      type: object
      required: [words, top]
      properties:
        words: { type: integer, minimum: 0 }
        top:
          type: array
          items: { type: object, required: [word, count], properties: { word: { type: string }, count: { type: integer } } }
limits: { max_iterations: 8, max_tool_calls: 12, timeout_s: 120 }
---
You report on a notes file.

1. Load the house-style skill and follow it.
2. Read the notes (input/notes.md) with read_file.
3. Count their words with count_words; it writes artifacts/word_counts.json.
4. Write artifacts/REPORT.md with the headings Summary and Top words.
`;

const TURNS = [
  { text: 'Loading the house style first.', toolCalls: [{ name: 'load_skill', args: { name: 'house-style' } }] },
  { toolCalls: [{ name: 'read_file', args: { path: 'input/notes.md' } }] },
  { toolCalls: [{ name: 'count_words', args: { path: 'input/notes.md' } }] },
  {
    toolCalls: [
      {
        name: 'write_artifact',
        args: {
          path: 'REPORT.md',
          content:
            "# Notes report\n\n## Summary\n\nThis report was written by the example's scripted model (script:notes-report.turns.json). count_words counted the notes and wrote the figures to word_counts.json; run the agent with a real model (--model …) to have them put into words.\n\n## Top words\n\nThe ten most frequent words and their counts are in artifacts/word_counts.json.\n",
        },
      },
    ],
  },
  { text: 'Wrote REPORT.md; the counts are in word_counts.json.' },
];

const SKILL = `---
name: house-style
description: How reports of this project are written (short sentences, the contract's headings, figures from tools only)
---
# House style

- Short sentences; no filler.
- Use the headings the artifact contract names, spelled exactly so.
- Every figure comes from a tool result, never from memory.
`;

const PLUGIN = `// A code plugin: its default export names its tools. \`import { definePlugin } from 'runtrail'\` gives
// types; a plain object works the same. ctx has signal, reporter, workspace and runId.
export default {
  name: 'text-tools',
  tools: [
    {
      name: 'count_words',
      description: 'Count the words of a text file of the run and write artifacts/word_counts.json',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'a file of the run, e.g. input/notes.md' } },
        required: ['path'],
        additionalProperties: false,
      },
      async execute(args, ctx) {
        const text = await ctx.workspace.readText(args.path);
        const words = text.toLowerCase().match(/[\\p{L}\\p{N}']+/gu) ?? [];
        const counts = new Map();
        for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
        const top = [...counts]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .slice(0, 10)
          .map(([word, count]) => ({ word, count }));
        await ctx.workspace.writeArtifact('word_counts.json', JSON.stringify({ words: words.length, top }, null, 2) + '\\n');
        return { ok: true, content: { words: words.length, top } };
      },
    },
  ],
};
`;

const NOTES = `# Release planning notes

The sync service needs a retry queue. Sync failures were the top complaint this month.
The export to CSV should keep the column order. The mobile app needs offline drafts.
`;

export interface InitResult {
  files: string[];
  command: string;
}

/** Writes the example into `dir`; refuses (naming the file) to overwrite anything that exists.
 *  `runtrail` is how the printed command starts (runtrail-command.ts: as this shell runs it). */
export function initProject(dir: string, shownDir: string, runtrail = 'runtrail'): InitResult {
  const files: Record<string, string> = {
    [`.runtrail/agents/${INIT_AGENT}.md`]: AGENT,
    [`.runtrail/agents/${INIT_AGENT}.turns.json`]: `${JSON.stringify(TURNS, null, 2)}\n`,
    '.runtrail/skills/house-style/SKILL.md': SKILL,
    '.runtrail/plugins/text-tools.mjs': PLUGIN,
    'notes.md': NOTES,
  };
  const existing = Object.keys(files).filter((f) => existsSync(join(dir, f)));
  if (existing.length) throw new Error(`${join(shownDir, existing[0])} already exists; init writes a new project only (nothing was written)`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return {
    files: Object.keys(files),
    command: `${runtrail} run ${INIT_AGENT} --project ${shellWord(shownDir)} --input ${shellWord(`notes=${join(shownDir, 'notes.md')}`)}`,
  };
}
