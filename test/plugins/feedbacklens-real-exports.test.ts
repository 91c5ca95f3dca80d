/**
 * The offline analysis on exports built the way real ones are (test/plugins/fixtures/real-export.ts):
 * English, Chinese and Spanish, filler phrases appended at random to rows of every topic,
 * near-duplicates, mixed ratings. It must read as a careful analyst's work: filler is no theme and
 * swallows no topic, every topic gets its theme, titles are whole product phrases (never a pair of
 * unrelated words, never a cut Chinese word), quotes agree with their theme, no "1 rows", each
 * reasoning step once.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyseFeedback, type FeedbackStats } from '../../src/plugins/feedbacklens/analysis/analyse-feedback.js';
import { parseFeedbackCsv } from '../../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { isWholeLabel } from '../../src/plugins/feedbacklens/analysis/theme-scoring.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { parseSchema } from '../../src/tools/schema.js';
import { BufferAdapter } from '../../src/channels/buffer-adapter.js';
import { makeDone, makeReasoning, makeStep } from '../../src/events/engine-event.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace } from './helpers/temp-workspace.js';
import { realExport, type ExportLang, type Topic } from './fixtures/real-export.js';

/** Words of each language's filler phrases: none may name a theme or be one of its key terms. */
const FILLER_WORDS: Record<ExportLang, string[]> = {
  en: ['asap', 'fix', 'affects', 'fix asap'],
  zh: ['希望', '尽快', '改进', '尽快改进', '希望尽快', '影响', '影响工作', '工作'],
  es: ['favor', 'arréglenlo', 'favor arréglenlo', 'afecta', 'trabajo'],
};

function analyse(lang: ExportLang, seed: number): { stats: FeedbackStats; topicOf: Map<string, Topic>; count: Record<Topic, number> } {
  const { csv, rows } = realExport(lang, { perTopic: 30, fillerShare: 0.5, seed });
  const parsed = parseFeedbackCsv(csv);
  if (!parsed.ok) throw new Error(parsed.error);
  const count = { sync: 0, crash: 0, price: 0, praise: 0 };
  for (const r of rows) count[r.topic]++;
  return { stats: analyseFeedback(parsed.value.rows), topicOf: new Map(rows.map((r) => [r.id, r.topic])), count };
}

/** The topic most of a theme's listed rows are about, and its share of them. */
function majority(ids: string[], topicOf: Map<string, Topic>): { topic: Topic; share: number } {
  const c = new Map<Topic, number>();
  for (const id of ids) c.set(topicOf.get(id)!, (c.get(topicOf.get(id)!) ?? 0) + 1);
  const [topic, n] = [...c].sort((a, b) => b[1] - a[1])[0];
  return { topic, share: n / ids.length };
}

describe.each(['en', 'zh', 'es'] as const)('offline analysis of a real-looking %s export', (lang) => {
  for (const seed of [7, 11]) {
    it(`seed ${seed}: filler is no theme, every topic has its own, titles are whole phrases, quotes agree`, () => {
      const { stats, topicOf, count } = analyse(lang, seed);
      expect(stats.language.code).toBe(lang);
      for (const t of stats.themes) {
        const shown = `${t.theme_id} ${t.title} [${t.key_terms.join(', ')}]`;
        // filler names nothing
        for (const w of FILLER_WORDS[lang]) {
          expect(
            t.key_terms.map((k) => k.toLowerCase()),
            shown,
          ).not.toContain(w);
          expect(t.title.toLowerCase(), shown).not.toBe(w);
        }
        // product language: one phrase, whole words
        expect(t.title, shown).not.toContain(' & ');
        expect(isWholeLabel(t.title), shown).toBe(true);
        for (const k of t.key_terms) expect(isWholeLabel(k), `${shown}: ${k}`).toBe(true);
        // a theme is one topic, not a mix pulled together by filler
        expect(majority(t.feedback_ids, topicOf).share, shown).toBeGreaterThanOrEqual(0.8);
        // quotes agree with the theme: praise never quotes a complaint, a problem never quotes praise
        const reps = t.representative_ids.map((id) => topicOf.get(id));
        if (t.sentiment === 'positive')
          expect(
            reps.every((x) => x === 'praise'),
            shown,
          ).toBe(true);
        if (t.sentiment === 'negative') expect(reps.includes('praise'), shown).toBe(false);
      }
      // every topic is found, and most of its rows sit in its themes (none swallowed by filler)
      for (const topic of ['sync', 'crash', 'price', 'praise'] as const) {
        const mine = stats.themes.filter((t) => majority(t.feedback_ids, topicOf).topic === topic);
        expect(mine.length, `${topic} has a theme`).toBeGreaterThan(0);
        const rows = mine.reduce((s, t) => s + t.mention_count, 0);
        expect(rows, `${topic} rows in its themes`).toBeGreaterThanOrEqual(0.7 * count[topic]);
      }
    });
  }
});

describe('small slips', () => {
  it('a one-row file says "1 feedback row", never "1 rows"; each reasoning step is said once', async () => {
    const ws = createTempWorkspace();
    try {
      const csv = ws.addInput('one.csv', 'id,text,rating\n1,The export to PDF crashes every time,1\n');
      const r = await driveOffline(createFeedbackLensPlugin(), { csv_path: csv, product_name: 'Acme' }, ws);
      expect(r.error).toBeUndefined();
      const written = ['feedback_analysis.json', 'product_backlog.json', 'insight_report.md']
        .map((f) => readFileSync(`${ws.root}/artifacts/${f}`, 'utf8'))
        .join('\n');
      expect(`${r.finalText}\n${written}`).not.toMatch(/\b1 rows\b/);
      expect(r.finalText).toContain('Analysed 1 feedback row for Acme');
      const steps = r.messages.flatMap((m) => (m.role === 'assistant' ? (m.reasoning ?? []).map((b) => /^Step \d+/.exec(b.text)?.[0]) : []));
      expect(steps.length).toBeGreaterThan(4);
      expect(new Set(steps).size).toBe(steps.length);
    } finally {
      ws.dispose();
    }
  });

  it('an IM reply keeps each turn\'s reasoning a paragraph of its own ("index." then "Step 2")', () => {
    const b = new BufferAdapter({ keepReasoning: true });
    b.emit(makeReasoning('Step 1: read the feedback CSV and build the evidence index.'));
    b.emit(makeStep('tool', { name: 'read_feedback_csv', phase: 'ok', result: 'ok' }));
    b.emit(makeReasoning('Step 2: sentiment, themes and priorities over all rows.'));
    b.emit(makeDone({ messageId: 'm', conversationId: 'c', content: 'Done.' }));
    const text = String(b.assemble());
    expect(text).not.toContain('index.Step 2');
    expect(text).toContain('evidence index.\n\nStep 2:');
  });
});

describe('the goal is read', () => {
  async function run(lang: ExportLang, goal: string) {
    const { csv, rows } = realExport(lang, { perTopic: 30, fillerShare: 0.5, seed: 7 });
    const ws = createTempWorkspace();
    try {
      const path = ws.addInput('export.csv', csv);
      const r = await driveOffline(createFeedbackLensPlugin(), { csv_path: path, product_name: 'Acme' }, ws, { goal });
      expect(r.error).toBeUndefined();
      expect(r.issues).toEqual([]);
      const stats = JSON.parse(r.toolCalls.find((c) => c.name === 'feedback_stats' && c.ok)!.content) as FeedbackStats;
      const report = readFileSync(`${ws.root}/artifacts/insight_report.md`, 'utf8');
      return { rows, stats, report, answer: r.finalText };
    } finally {
      ws.dispose();
    }
  }

  it('a goal naming a platform narrows the analysis to it, and the report says so', async () => {
    const { rows, stats, report, answer } = await run('en', 'What do our iOS users complain about most?');
    const ios = rows.filter((r) => r.platform === 'iOS');
    expect(stats.segment).toEqual({ column: 'platform', values: ['iOS'], rows: ios.length, of_rows: rows.length });
    expect(stats.analysed_rows).toBe(ios.length);
    const iosIds = new Set(ios.map((r) => r.id));
    for (const t of stats.themes) for (const id of t.feedback_ids) expect(iosIds.has(id)).toBe(true);
    expect(report).toContain(`_Scope: The goal names iOS, so this analysis covers only the ${ios.length} of ${rows.length} rows whose platform is iOS._`);
    expect(answer).toContain(`(platform iOS only, of ${rows.length} rows, as the goal asks)`);
  });

  it('"mobile users" in Chinese narrows to the mobile platforms; a plan named in Spanish narrows by plan', async () => {
    const zh = await run('zh', '移动端用户最不满意的是什么？');
    expect(zh.stats.segment).toMatchObject({ column: '平台', values: expect.arrayContaining(['iOS', 'Android']) });
    expect(zh.stats.segment!.values).toHaveLength(2);
    expect(zh.stats.analysed_rows).toBe(zh.rows.filter((r) => r.platform !== 'Web').length);
    const es = await run('es', '¿Qué les molesta a los clientes Enterprise?');
    expect(es.stats.segment).toMatchObject({ column: 'plan', values: ['Enterprise'] });
    expect(es.stats.analysed_rows).toBe(es.rows.filter((r) => r.plan === 'Enterprise').length);
  });

  it('a goal it cannot use is stated as such, with the segments the file has', async () => {
    const { rows, stats, report } = await run('en', 'What do our customers in Germany dislike?');
    expect(stats.segment).toBeUndefined();
    expect(stats.analysed_rows).toBe(rows.length);
    expect(report).toContain("_Scope: Every row is analysed: the goal names no value of the file's segment columns (platform: ");
    expect(report).toContain('plan: ');
    expect(report).toContain('so it could not narrow the analysis._');
  });

  it('feedback_stats refuses a segment the file does not have, naming the columns and values', async () => {
    const { csv } = realExport('en', { perTopic: 5, seed: 7 });
    const ws = createTempWorkspace();
    try {
      const path = ws.addInput('export.csv', csv);
      const plugin = createFeedbackLensPlugin();
      const tools = new Map(
        plugin
          .createTools({ runId: ws.runId, input: parseSchema(plugin.inputSchema, { csv_path: path }), goal: 'g', workspace: ws, notice: () => {} })
          .map((t) => [t.name, t]),
      );
      const stats = tools.get('feedback_stats')!;
      const bad = await stats.execute(parseSchema(stats.parameters, { segment: { column: 'country', values: ['DE'] } }));
      expect(bad.ok).toBe(false);
      expect(bad.content).toContain('segment.column: \\"country\\" is not a segment column of this file (platform, plan)');
      const badValue = await stats.execute(parseSchema(stats.parameters, { segment: { column: 'plan', values: ['Gold'] } }));
      expect(badValue.content).toContain('segment.values: \\"Gold\\" not in plan (');
    } finally {
      ws.dispose();
    }
  });
});
