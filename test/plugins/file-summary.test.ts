import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileSummaryPlugin } from '../../src/plugins/file-summary/file-summary-plugin.js';
import { fileSummaryInputSchema } from '../../src/plugins/file-summary/input-schema.js';
import { markdownBlocks, splitSentences, summarise } from '../../src/plugins/file-summary/analysis/extractive-summary.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';

let ws: TempWorkspace;
afterEach(() => ws?.dispose());
const plugin = createFileSummaryPlugin();

async function summariseFile(name: string, content: string | Uint8Array) {
  ws = createTempWorkspace();
  const path = ws.addInput(name, content);
  return driveOffline(plugin, { path }, ws);
}
const summaryMd = () => readFileSync(`${ws.root}/artifacts/summary.md`, 'utf8');

describe('extractive summary', () => {
  it('drops code, tables and markup, keeps headings apart', () => {
    const blocks = markdownBlocks('# T\n\nSome **bold** [link](http://x) text.\n\n```\ncode here\n```\n| a | b |\n- item one\n');
    expect(blocks).toEqual([
      { text: 'T', section: 0, heading: true },
      { text: 'Some bold link text.', section: 0, heading: false },
      { text: 'item one', section: 0, heading: false },
    ]);
  });
  it('splits sentences without breaking abbreviations or decimals', () => {
    expect(splitSentences('Load took 8.1 s at p90. Use e.g. lists! Done')).toEqual(['Load took 8.1 s at p90.', 'Use e.g. lists!', 'Done']);
  });
  it('picks central sentences, verbatim and in document order', () => {
    const text = [
      'Calendar sync fails for many users and sync tickets dominate support.',
      'The office plant was watered on Tuesday.',
      'Fixing calendar sync conflicts is the top priority for the sync team.',
      'Lunch was pizza.',
    ].join(' ');
    const s = summarise(text, { maxSentences: 2 });
    expect(s.summary).toEqual([
      'Calendar sync fails for many users and sync tickets dominate support.',
      'Fixing calendar sync conflicts is the top priority for the sync team.',
    ]);
  });
});

describe('file_summary input', () => {
  it.each([[{}], [{ path: '' }], [{ path: 'a'.repeat(1001) }], [{ path: 3 }], [{ path: 'a.md', extra: 1 }]])('rejects %j', (input) => {
    expect(fileSummaryInputSchema.safeParse(input).success).toBe(false);
  });
});

describe('file_summary offline procedure', () => {
  it('summarises the example notes with the required headings and passes the checks', async () => {
    const r = await summariseFile('notes.md', readFileSync('examples/notes.md'));
    expect(r.issues).toEqual([]);
    const md = summaryMd();
    expect(md).toMatch(/^# Summary of TaskFlow Pro: Q3 product review notes/);
    expect(md).toContain('## Summary');
    expect(md).toContain('## Key Points');
    expect(md).toMatch(/[Cc]alendar sync/);
    const source = readFileSync('examples/notes.md', 'utf8').replace(/\s+/g, ' ');
    // extractive: every summary sentence is quoted from the notes
    const para = md.split('## Summary')[1].split('## Key Points')[0].trim();
    for (const s of splitSentences(para)) expect(source.replace(/\*\*/g, '')).toContain(s);
    expect(md.split(/\s+/).length).toBeLessThan(source.split(' ').length * 0.6);
    expect(r.finalText).toMatch(/^Summary of input\/notes\.md/);
  });
  it('summarises a one-line plain text file', async () => {
    const r = await summariseFile('one.txt', 'The release moved to Friday because QA found a blocker.');
    expect(r.issues).toEqual([]);
    expect(summaryMd()).toContain('The release moved to Friday because QA found a blocker.');
  });
  it('reads a long file in slices', async () => {
    const para = (i: number) => `Section ${i} discusses topic ${i % 7} in depth with several details about scheduling and budgets.`;
    const r = await summariseFile('long.txt', Array.from({ length: 600 }, (_, i) => para(i)).join('\n'));
    expect(r.toolCalls.filter((c) => c.name === 'read_text_file').length).toBeGreaterThan(1);
    expect(r.issues).toEqual([]);
  });
  it('refuses binary files and unsupported types with a clear answer', async () => {
    let r = await summariseFile('photo.txt', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
    expect(r.finalText).toMatch(/looks like a binary file/);
    ws.dispose();
    r = await summariseFile('sheet.xlsx', 'abc');
    expect(r.finalText).toMatch(/only text or Markdown files can be summarised/);
  });
});

describe('file_summary checks', () => {
  async function check(markdown: string) {
    const tool = plugin
      .createTools({ runId: 'r', input: { path: 'input/n.md' }, goal: '', workspace: ws, notice: () => {} })
      .find((t) => t.name === 'write_summary')!;
    return tool.execute({ content: markdown });
  }
  it('write_summary rejects missing headings, empty sections and summaries as long as the source', async () => {
    ws = createTempWorkspace();
    ws.addInput('n.md', 'word '.repeat(1000));
    let r = await check('# S\n## Summary\ntext');
    expect(r.ok).toBe(false);
    expect(JSON.parse(r.content).issues).toContain('summary.md lacks the heading "Key Points" (found: "s", "summary")');
    r = await check('## Summary\n\n## Key Points\n- a point');
    expect(JSON.parse(r.content).issues).toEqual(['summary.md: section "Summary" is empty']);
    r = await check(`## Summary\n${'word '.repeat(700)}\n## Key Points\n- a`);
    expect(JSON.parse(r.content).issues[0]).toMatch(/^summary\.md: \d+ words for a 1000-word source; at most 600/);
  });
  it("the stop validator reports an over-long summary written behind the tool's back", async () => {
    ws = createTempWorkspace();
    const path = ws.addInput('n.md', 'word '.repeat(400));
    writeFileSync(`${ws.root}/artifacts/summary.md`, `## Summary\n${'x '.repeat(300)}\n## Key Points\n- a\n`);
    const issues = await plugin.validators[0].validate({ runId: 'r', input: { path }, workspace: ws });
    expect(issues.map((i) => i.check)).toEqual(['summary_length']);
  });
});
