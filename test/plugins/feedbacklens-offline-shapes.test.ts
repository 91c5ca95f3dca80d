import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import type { ToolDefinition } from '../../src/tools/tool.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';

let ws: TempWorkspace;
afterEach(() => ws?.dispose());

const plugin = createFeedbackLensPlugin();

async function runOn(content: string | Uint8Array, input: Record<string, unknown> = {}) {
  ws = createTempWorkspace();
  const csv = ws.addInput('data.csv', content);
  return driveOffline(plugin, { csv_path: csv, ...input }, ws);
}

const analysis = () => JSON.parse(readFileSync(`${ws.root}/artifacts/feedback_analysis.json`, 'utf8'));

/** Deterministic synthetic feedback: planted problems and praise, varied wording. */
export function syntheticCsv(n: number, withIds = true): string {
  const openers = ['Honestly,', 'Since last week', 'Again:', 'FYI', 'Ugh.', 'Hi team,', ''];
  const issues = [
    ['the export to excel fails with a timeout', 1],
    ['login with single sign-on loops back to the start page', 1],
    ['the invoice totals are wrong and billing double charged us', 2],
    ['search results are slow and irrelevant', 2],
    ['the new dashboard looks beautiful and I love the charts', 5],
    ['support answered quickly and solved my problem, great service', 5],
    ['notifications arrive late or not at all on android', 2],
  ] as const;
  const lines = [withIds ? 'ticket_id,comment,score,platform' : 'comment,score,platform'];
  for (let i = 0; i < n; i++) {
    const [text, rating] = issues[(i * 7 + (i >> 3)) % issues.length];
    const opener = openers[i % openers.length];
    const body = `${opener} ${text}${i % 5 === 0 ? ', please fix, it is "really" annoying' : '.'}`.trim();
    const quoted = `"${body.replace(/"/g, '""')}"`;
    lines.push(`${withIds ? `T${100000 + i},` : ''}${quoted},${rating},${['web', 'ios', 'android'][i % 3]}`);
  }
  return lines.join('\n');
}

describe('feedbacklens offline procedure on any CSV', () => {
  it('generates ids the evidence index also uses when the file has none', async () => {
    const r = await runOn('feedback,rating\n"Sync keeps failing, lost my edits",1\nLove the calendar view,5\nSync failed again this morning,2\n');
    expect(r.issues).toEqual([]);
    const ids = analysis().themes.flatMap((t: { feedback_ids: string[] }) => t.feedback_ids);
    expect(ids.every((id: string) => /^row-\d+$/.test(id))).toBe(true);
    expect(analysis().source.id_source).toBe('generated');
    const index = JSON.parse(readFileSync(`${ws.root}/runtime/evidence_index.json`, 'utf8'));
    expect(index.entries.map((e: { feedback_id: string }) => e.feedback_id)).toEqual(['row-1', 'row-2', 'row-3']);
  });

  it('handles a BOM, CRLF line ends, semicolons and quoted newlines', async () => {
    const body = 'ID;Content;Rating\r\n1;"Crashes on start,\r\nevery time";1\r\n2;Crashes when saving;1\r\n3;"Nice ""dark"" mode";5\r\n';
    const r = await runOn(new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(body)]));
    expect(r.issues).toEqual([]);
    expect(analysis().source.analysed_rows).toBe(3);
  });

  it('handles a Windows-1252 export', async () => {
    const r = await runOn(
      new Uint8Array([...Buffer.from('text\nThe caf'), 0xe9, ...Buffer.from(' page crashes\nThe caf'), 0xe9, ...Buffer.from(' page is slow\n')]),
    );
    expect(r.issues).toEqual([]);
    expect(JSON.stringify(analysis())).toContain('café');
  });

  it('produces a valid result from a single row', async () => {
    const r = await runOn('text\nThe reminder emails arrive a day late\n');
    expect(r.issues).toEqual([]);
    expect(analysis().themes).toHaveLength(1);
    expect(analysis().themes[0].evidence[0]).toEqual({ feedback_id: 'row-1', evidence_text: 'The reminder emails arrive a day late' });
  });

  it('analyses 10,000 rows within the loop limits and finds the planted themes', async () => {
    const r = await runOn(syntheticCsv(10_000), { product_name: 'Synthetic' });
    expect(r.issues).toEqual([]);
    expect(r.messages.filter((m) => m.role === 'assistant').length).toBeLessThanOrEqual(20);
    expect(r.toolCalls.length).toBeLessThanOrEqual(60);
    const a = analysis();
    expect(a.source.analysed_rows).toBe(10_000);
    const labels = a.themes.map((t: { key_terms: string[] }) => t.key_terms.join(' ')).join(' | ');
    for (const word of ['export', 'login', 'invoice', 'search', 'notification']) expect(labels).toContain(word);
    // the read tool's first page stays small whatever the file size
    expect(r.toolCalls.find((c) => c.name === 'read_feedback_csv')!.content.length).toBeLessThan(60_000);
  }, 60_000);

  it('uses the compute skill on large inputs when execute_skill is offered', async () => {
    const seen: unknown[] = [];
    const executeSkill: ToolDefinition<{ skill: string; input: Record<string, unknown> }> = {
      name: 'execute_skill',
      description: 'stub',
      parameters: z.object({ skill: z.string(), input: z.record(z.string(), z.unknown()) }),
      async execute(args) {
        seen.push(args);
        return {
          ok: true,
          content: `Skill csv_profile completed in 5 ms.\n${JSON.stringify({ rows: 6000, columns: [{}, {}, {}, {}], output_path: 'artifacts/csv_profile.json' })}`,
        };
      },
    };
    ws = createTempWorkspace();
    const csv = ws.addInput('big.csv', syntheticCsv(6000));
    const r = await driveOffline(plugin, { csv_path: csv }, ws, { extraTools: [executeSkill] });
    expect(r.issues).toEqual([]);
    expect(seen).toEqual([{ skill: 'csv_profile', input: { csv_path: csv } }]);
    expect(readFileSync(`${ws.root}/artifacts/insight_report.md`, 'utf8')).toContain(
      'csv_profile compute skill before analysis (6000 rows, 4 columns; artifacts/csv_profile.json)',
    );
  }, 60_000);

  it('does not call the compute skill on small inputs', async () => {
    const r = await runOn(syntheticCsv(100));
    expect(r.toolCalls.some((c) => c.name === 'execute_skill')).toBe(false);
  });

  it('ends the run failed, with the read error, when the CSV cannot be read', async () => {
    ws = createTempWorkspace();
    const r = await driveOffline(plugin, { csv_path: 'input/missing.csv' }, ws);
    expect(r.error?.code).toBe('input_unusable');
    expect(r.error?.message).toMatch(/^The feedback file cannot be analysed: cannot read "input\/missing\.csv"/);
    expect(r.error?.message).not.toMatch(/time\(s\)/);
    expect(r.finalText).toBe('');
    expect(r.toolCalls.map((c) => c.name)).toEqual(['read_feedback_csv']);
  });

  it('ends the run failed when the file has no text column', async () => {
    const r = await runOn('id,rating\n1,3\n2,4\n');
    expect(r.error?.message).toMatch(/no text column found/);
  });

  it('does not analyse a CSV without feedback text (name,age): the run fails, listing the columns and how to name the text column', async () => {
    const r = await runOn('name,age\nalice,31\nbob,42\n');
    expect(r.toolCalls.some((c) => c.name === 'feedback_stats')).toBe(false);
    expect(r.error?.code).toBe('input_unusable');
    expect(r.error?.message).toContain('no column holds free-text feedback');
    expect(r.error?.message).toContain('"name" ("alice"), "age" ("31")');
    expect(r.error?.message).toMatch(/Name the column that holds the feedback text one of "text", "feedback", .*"反馈内容"/);
  });

  it('fails when the text column is empty in every row', async () => {
    const r = await runOn('id,text,channel\n1,,web\n2,  ,ios\n');
    expect(r.error?.message).toContain('the text column "text" is empty in every row');
    expect(r.error?.message).toContain('"id" ("1"), "text" (empty), "channel" ("web")');
  });
});

describe('feedbacklens offline procedure beyond English', () => {
  it('handles Chinese and Vietnamese feedback and still passes every check', async () => {
    const rows = [
      'id,text,rating',
      '1,日历同步经常失败，任务没有出现在日历里,1',
      '2,日历同步又失败了，请尽快修复,1',
      '3,价格太贵了，小团队负担不起,2',
      '4,价格上涨太快,2',
      '5,Ứng dụng bị treo khi mở tệp đính kèm,1',
      '6,Ứng dụng bị treo liên tục trên Android,1',
      '7,Tôi rất thích giao diện mới,5',
      `8,${'a'.repeat(150)},3`,
    ];
    const r = await runOn(rows.join('\n'));
    expect(r.issues).toEqual([]);
    const terms = analysis().themes.flatMap((t: { key_terms: string[] }) => t.key_terms);
    expect(terms.every((t: string) => t.length <= 61)).toBe(true);
  });
});
