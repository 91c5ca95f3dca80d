import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { feedbackLensInputSchema } from '../../src/plugins/feedbacklens/input-schema.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';
import { checkSchema, parseSchema } from '../../src/tools/schema.js';

let ws: TempWorkspace;
let tools: Map<string, AnyToolDefinition>;

const CSV = [
  'id,text,rating,channel',
  '1,"Sync fails, every morning",1,email',
  '2,"Great board view\nwith colours",5,app_store',
  '3,Pricing is too high for small teams,2,survey',
].join('\n');

function setup(csv: string | Uint8Array = CSV, input: Record<string, unknown> = {}): void {
  ws = createTempWorkspace();
  const csvPath = ws.addInput('fb.csv', csv);
  const plugin = createFeedbackLensPlugin();
  const parsed = parseSchema(plugin.inputSchema, { csv_path: csvPath, product_name: 'Acme', ...input });
  tools = new Map(plugin.createTools({ runId: 'r', input: parsed, goal: 'g', workspace: ws, notice: () => {} }).map((t) => [t.name, t]));
}

async function run(name: string, args: unknown) {
  const tool = tools.get(name)!;
  const parsed = parseSchema(tool.parameters, args);
  const r = await tool.execute(parsed);
  return { ...r, data: JSON.parse(r.content) };
}

afterEach(() => ws?.dispose());

describe('feedbacklens input schema', () => {
  it('accepts the documented input', () => {
    expect(feedbackLensInputSchema.parse({ csv_path: 'a.csv', product_name: 'X', max_rows: 10 })).toEqual({
      csv_path: 'a.csv',
      product_name: 'X',
      max_rows: 10,
    });
  });
  it.each([
    [{}, 'csv_path'],
    [{ csv_path: '' }, 'csv_path'],
    [{ csv_path: 'x'.repeat(1001) }, 'csv_path'],
    [{ csv_path: 1 }, 'csv_path'],
    [{ csv_path: 'a.csv', product_name: 'p'.repeat(201) }, 'product_name'],
    [{ csv_path: 'a.csv', max_rows: 0 }, 'max_rows'],
    [{ csv_path: 'a.csv', max_rows: 1.5 }, 'max_rows'],
    [{ csv_path: 'a.csv', extra: true }, 'extra'],
  ])('rejects %j naming %s', (input, field) => {
    const r = feedbackLensInputSchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(field);
  });
});

describe('read_feedback_csv', () => {
  beforeEach(() => setup());
  it('returns normalised rows and writes the evidence index', async () => {
    const r = await run('read_feedback_csv', {});
    expect(r.ok).toBe(true);
    expect(r.data).toMatchObject({ total_rows: 3, analysed_rows: 3, id_source: 'column', next_offset: null, product_name: 'Acme' });
    expect(r.data.rows[1]).toMatchObject({ feedback_id: '2', text: 'Great board view\nwith colours', rating: 5, channel: 'app_store' });
    const index = JSON.parse(readFileSync(`${ws.root}/runtime/evidence_index.json`, 'utf8'));
    expect(index.entries.map((e: { feedback_id: string }) => e.feedback_id)).toEqual(['1', '2', '3']);
    expect(index.entries[0].text).toBe('Sync fails, every morning');
  });
  it('pages with offset and limit', async () => {
    const r = await run('read_feedback_csv', { offset: 1, limit: 1 });
    expect(r.data).toMatchObject({ offset: 1, returned: 1, next_offset: 2 });
    expect(r.data.rows[0].feedback_id).toBe('2');
  });
  it('rejects an offset past the end', async () => {
    const r = await run('read_feedback_csv', { offset: 9 });
    expect(r.ok).toBe(false);
    expect(r.data.error).toMatch(/offset 9 is past the last row \(3 rows\)/);
  });
  it('rejects a limit above 500 at argument validation', () => {
    expect(checkSchema(tools.get('read_feedback_csv')!.parameters, { limit: 501 }).ok).toBe(false);
  });
  it('reports an unreadable path as an error result, not a throw', async () => {
    const r = await run('read_feedback_csv', { path: '../../etc/passwd' });
    expect(r.ok).toBe(false);
    expect(r.diagnosis?.code).toBe('csv_unreadable');
  });
});

describe('read_feedback_csv page bounds', () => {
  it('keeps a page of very long rows within the character budget', async () => {
    const long = 'word '.repeat(1000);
    setup(['id,text', ...Array.from({ length: 100 }, (_, i) => `${i},${long}`)].join('\n'));
    const r = await run('read_feedback_csv', { limit: 500 });
    expect(r.content.length).toBeLessThan(70_000);
    expect(r.data.returned).toBeLessThan(100);
    expect(r.data.next_offset).toBe(r.data.returned);
  });
  it('honours max_rows from the input', async () => {
    setup(['text', ...Array.from({ length: 50 }, (_, i) => `row ${i} text`)].join('\n'), { max_rows: 10 });
    const r = await run('read_feedback_csv', {});
    expect(r.data).toMatchObject({ total_rows: 50, analysed_rows: 10, truncated_by_max_rows: true });
  });
  it('reads UTF-16 and Windows-1252 files', async () => {
    setup(new Uint8Array([0xff, 0xfe, ...Buffer.from('id,text\n1,Café crashed\n', 'utf16le')]));
    expect((await run('read_feedback_csv', {})).data.rows[0].text).toBe('Café crashed');
    ws.dispose();
    setup(new Uint8Array([...Buffer.from('id,text\n1,Caf'), 0xe9, ...Buffer.from(' crashed\n')]));
    const r = await run('read_feedback_csv', {});
    expect(r.data).toMatchObject({ encoding: 'windows-1252' });
    expect(r.data.rows[0].text).toBe('Café crashed');
  });
});

describe('feedback_stats and extract_evidence', () => {
  beforeEach(() => setup());
  it('summarises ratings, channels, sentiment and themes', async () => {
    const r = await run('feedback_stats', {});
    expect(r.ok).toBe(true);
    expect(r.data).toMatchObject({ analysed_rows: 3, average_rating: 2.67, channels: { email: 1, app_store: 1, survey: 1 } });
    expect(r.data.sentiment.positive + r.data.sentiment.neutral + r.data.sentiment.negative).toBe(3);
    expect(r.data.themes.length).toBeGreaterThan(0);
  });
  it('quotes named rows verbatim and lists unknown ids', async () => {
    const r = await run('extract_evidence', { feedback_ids: ['1', 'nope'] });
    expect(r.data.evidence).toEqual([expect.objectContaining({ feedback_id: '1', evidence_text: 'Sync fails, every morning' })]);
    expect(r.data.unknown_ids).toEqual(['nope']);
  });
  it('finds rows by terms', async () => {
    const r = await run('extract_evidence', { terms: ['pricing'] });
    expect(r.data.evidence.map((e: { feedback_id: string }) => e.feedback_id)).toEqual(['3']);
  });
  it('fails when every id is unknown, and requires ids or terms', async () => {
    const r = await run('extract_evidence', { feedback_ids: ['x'] });
    expect(r.ok).toBe(false);
    expect(r.data.error).toMatch(/none of the feedback_ids exist: x/);
    expect(checkSchema(tools.get('extract_evidence')!.parameters, {}).ok).toBe(false);
  });
});

const goodAnalysis = () => ({
  product_name: 'Acme',
  goal: 'g',
  source: { csv_path: 'input/fb.csv', total_rows: 3, analysed_rows: 3, id_source: 'column' },
  summary: 's',
  sentiment: { positive: 1, neutral: 0, negative: 2, average_score: -0.3 },
  themes: [
    {
      theme_id: 'T1',
      title: 'Sync',
      summary: 's',
      key_terms: ['sync'],
      mention_count: 1,
      share: 0.33,
      sentiment: 'negative',
      severity: 'high',
      average_rating: 1,
      feedback_ids: ['1'],
      evidence: [{ feedback_id: '1', evidence_text: 'Sync fails' }],
    },
  ],
  insights: [{ insight: 'i', theme_id: 'T1', evidence: [{ feedback_id: '1', evidence_text: 'every morning' }] }],
});

describe('write_json_artifact', () => {
  beforeEach(async () => {
    setup();
    await run('read_feedback_csv', {});
  });
  it('writes a document that satisfies the schema and the evidence', async () => {
    const r = await run('write_json_artifact', { path: 'feedback_analysis.json', content: goodAnalysis() });
    expect(r.ok).toBe(true);
    expect(JSON.parse(readFileSync(`${ws.root}/artifacts/feedback_analysis.json`, 'utf8')).product_name).toBe('Acme');
  });
  it('accepts the document as a JSON string', async () => {
    const r = await run('write_json_artifact', { path: 'feedback_analysis.json', content: JSON.stringify(goodAnalysis()) });
    expect(r.ok).toBe(true);
  });
  it('rejects a wrong enum naming the file, field path and value, and writes nothing', async () => {
    const doc = goodAnalysis();
    (doc.themes[0] as { severity: string }).severity = 'urgent';
    const r = await run('write_json_artifact', { path: 'feedback_analysis.json', content: doc });
    expect(r.ok).toBe(false);
    expect(r.data.issues[0]).toBe('feedback_analysis.json: themes[0].severity: expected one of low|medium|high|critical, got "urgent"');
    expect(() => readFileSync(`${ws.root}/artifacts/feedback_analysis.json`)).toThrow();
  });
  it('rejects a missing required field', async () => {
    const { summary: _, ...doc } = goodAnalysis();
    const r = await run('write_json_artifact', { path: 'feedback_analysis.json', content: doc });
    expect(r.data.issues[0]).toMatch(/^feedback_analysis\.json: summary: /);
  });
  it('rejects an invented feedback_id and a paraphrased quote', async () => {
    const doc = goodAnalysis();
    doc.themes[0].feedback_ids = ['1', '99'];
    doc.insights[0].evidence[0].evidence_text = 'syncing fails each morning';
    const r = await run('write_json_artifact', { path: 'feedback_analysis.json', content: doc });
    expect(r.ok).toBe(false);
    expect(r.data.issues).toEqual([
      'feedback_analysis.json: themes[0].feedback_ids[1]: "99" is not in the evidence index',
      'feedback_analysis.json: insights[0].evidence[0].evidence_text: "syncing fails each morning" is not a verbatim part of feedback "1"',
    ]);
  });
  it('rejects invalid JSON text and paths that are not .json or escape artifacts/', async () => {
    expect((await run('write_json_artifact', { path: 'feedback_analysis.json', content: '{"a":' })).diagnosis?.code).toBe('invalid_json');
    expect((await run('write_json_artifact', { path: 'x.txt', content: {} })).data.error).toMatch(/must end in \.json/);
    expect((await run('write_json_artifact', { path: '../runtime/x.json', content: {} })).diagnosis?.code).toBe('write_refused');
  });
});

describe('write_markdown_artifact and list_artifacts', () => {
  beforeEach(() => setup());
  it('rejects a report without the required headings', async () => {
    const r = await run('write_markdown_artifact', { path: 'insight_report.md', content: '# Report\n\n## Executive Summary\ntext' });
    expect(r.ok).toBe(false);
    expect(r.data.issues).toContain('insight_report.md lacks the heading "Key Themes" (found: "report", "executive summary")');
  });
  it('writes a complete report and lists what is still missing', async () => {
    const md = ['# R', '## Executive Summary', '## Key Themes', '## Prioritized Backlog', '## Evidence', '## Method'].join('\n\n');
    expect((await run('write_markdown_artifact', { path: 'insight_report.md', content: md })).ok).toBe(true);
    const l = await run('list_artifacts', {});
    expect(l.data.artifacts.map((a: { path: string }) => a.path)).toEqual(['insight_report.md']);
    expect(l.data.missing_required).toEqual(['feedback_analysis.json', 'product_backlog.json']);
  });
});
