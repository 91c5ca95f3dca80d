/**
 * Large inputs: a 200,000-row export is streamed, every row counted, the themes
 * fitted on a bounded sample that the artifacts name, and the rows kept in the evidence index on
 * disk, which the tools and the checks read. Behaviour only: memory and time are the bench's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFeedbackCsv } from '../../bench/feedback-csv-generator.js';
import { analyseFeedback, type FeedbackStats } from '../../src/plugins/feedbacklens/analysis/analyse-feedback.js';
import { FeedbackAnalyser, THEME_FIT_ROWS } from '../../src/plugins/feedbacklens/analysis/feedback-analyser.js';
import type { FeedbackRow } from '../../src/plugins/feedbacklens/analysis/feedback-row.js';
import { FeedbackTally } from '../../src/plugins/feedbacklens/analysis/feedback-tally.js';
import { parseFeedbackCsv } from '../../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { sampleRows } from '../../src/plugins/feedbacklens/analysis/row-sample.js';
import { normaliseRating, ratingScale, scoreSentiment } from '../../src/plugins/feedbacklens/analysis/sentiment-score.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { detectCorpusLanguage } from '../../src/plugins/shared/text-language.js';
import { parseSchema } from '../../src/tools/schema.js';
import { driveOffline, type DriveResult } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';

const ROWS = 200_000;
const plugin = createFeedbackLensPlugin();

describe('feedbacklens on a 200,000-row export', () => {
  let ws: TempWorkspace;
  let csv: string;
  let run: DriveResult;
  let rows: FeedbackRow[];
  const art = (name: string) => join(ws.root, 'artifacts', name);
  const analysis = () => JSON.parse(readFileSync(art('feedback_analysis.json'), 'utf8'));
  const stats = (): FeedbackStats => JSON.parse(run.toolCalls.find((c) => c.name === 'feedback_stats')!.content);
  const checks = async () => {
    const ctx = { runId: ws.runId, input: { csv_path: csv }, workspace: ws };
    return (await Promise.all(plugin.validators.map((v) => v.validate(ctx as never)))).flat();
  };

  beforeAll(async () => {
    ws = createTempWorkspace();
    csv = ws.addInput('export.csv', '');
    await writeFeedbackCsv(join(ws.root, csv), ROWS);
    run = await driveOffline(plugin, { csv_path: csv, product_name: 'TaskFlow Pro' }, ws);
    // the whole-file reading, to check the streamed counts against
    const parsed = parseFeedbackCsv(readFileSync(join(ws.root, csv), 'utf8'));
    if (!parsed.ok) throw new Error(parsed.error);
    rows = parsed.value.rows;
  }, 270_000);
  afterAll(() => ws?.dispose());

  it('completes with every stop check passing, analysing every row, and says in source that the themes come from a sample', () => {
    expect(run.error).toBeUndefined();
    expect(run.issues).toEqual([]);
    const a = analysis();
    expect(a.source).toEqual({
      csv_path: csv,
      total_rows: ROWS,
      analysed_rows: ROWS,
      id_source: 'column',
      sample: { rows: THEME_FIT_ROWS, seed: 14, method: expect.stringMatching(/uniform random sample .* every count covers every row/) },
    });
    const report = readFileSync(art('insight_report.md'), 'utf8');
    expect(report).toContain(`Sample: the themes were fitted on a uniform random sample of ${THEME_FIT_ROWS} of the ${ROWS} rows`);
    // the generator's recurring problems come out as themes
    const terms = a.themes.map((t: { key_terms: string[] }) => t.key_terms.join(' ')).join(' | ');
    for (const w of ['sync', 'crash', 'price']) expect(terms).toContain(w);
  });

  it('counts every row, not the sample: sentiment, ratings and channels equal a whole-file computation', () => {
    const scale = ratingScale(rows.map((r) => r.rating));
    const counts = { positive: 0, neutral: 0, negative: 0 };
    for (const r of rows) counts[scoreSentiment(r.text, normaliseRating(r.rating, scale), 'en').label]++;
    expect(counts.positive + counts.neutral + counts.negative).toBe(ROWS);
    expect(analysis().sentiment).toMatchObject(counts);
    const s = stats();
    const rated = rows.filter((r) => r.rating !== null);
    expect(s.average_rating).toBe(Math.round((rated.reduce((x, r) => x + (r.rating as number), 0) / rated.length) * 100) / 100);
    const email = rows.filter((r) => r.channel === 'email').length;
    expect(s.channels.email).toBe(email);
    // every row is in one theme, counted in the themes left off the list, or counted as unclustered
    const leftOff = (s as FeedbackStats & { themes_left_off?: { rows: number } }).themes_left_off?.rows ?? 0;
    expect(s.themes.reduce((x, t) => x + t.mention_count, 0) + leftOff + s.unclustered_rows).toBe(ROWS);
    // more rows in themes than the sample holds, and shares of all rows
    expect(s.themes.reduce((x, t) => x + t.mention_count, 0)).toBeGreaterThan(THEME_FIT_ROWS);
    for (const t of s.themes) expect(t.share).toBeCloseTo(t.mention_count / ROWS, 3);
  });

  it('keeps every row in the evidence index on disk, one entry a line, the same rows the file holds', () => {
    const text = readFileSync(join(ws.root, 'runtime', 'evidence_index.json'), 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(ROWS + 2);
    const index = JSON.parse(text);
    expect(index).toMatchObject({ total_rows: ROWS, indexed_rows: ROWS, id_column: 'feedback_id', text_column: 'text' });
    for (const k of [0, 1, 123_457, ROWS - 1])
      expect(index.entries[k]).toMatchObject({ feedback_id: rows[k].feedback_id, row: rows[k].row, text: rows[k].text });
  });

  it('checks quotes against the index on disk: a verbatim quote of the last row passes, a paraphrase and an invented id fail', async () => {
    const last = rows[ROWS - 1];
    const doc = analysis();
    doc.insights[0].evidence = [{ feedback_id: last.feedback_id, evidence_text: last.text.slice(0, 40) }];
    writeFileSync(art('feedback_analysis.json'), JSON.stringify(doc));
    expect(await checks()).toEqual([]);
    doc.insights[0].evidence = [
      { feedback_id: last.feedback_id, evidence_text: 'this row never said this' },
      { feedback_id: 'FB-9999999', evidence_text: 'no such row' },
    ];
    writeFileSync(art('feedback_analysis.json'), JSON.stringify(doc));
    expect((await checks()).map((i) => i.message).sort()).toEqual([
      `feedback_analysis.json: insights[0].evidence[0].evidence_text: "this row never said this" is not a verbatim part of feedback "${last.feedback_id}"`,
      'feedback_analysis.json: insights[0].evidence[1].feedback_id: "FB-9999999" is not in the evidence index',
    ]);
  });

  it('pages to the end of the file and quotes a row deep in it by id', async () => {
    const tools = new Map(
      plugin
        .createTools({ runId: ws.runId, input: parseSchema(plugin.inputSchema, { csv_path: csv }), goal: 'g', workspace: ws, notice: () => {} })
        .map((t) => [t.name, t]),
    );
    const call = async (name: string, args: unknown) => JSON.parse((await tools.get(name)!.execute(parseSchema(tools.get(name)!.parameters, args))).content);
    const page = await call('read_feedback_csv', { offset: ROWS - 3, limit: 10 });
    expect(page).toMatchObject({ total_rows: ROWS, analysed_rows: ROWS, returned: 3, next_offset: null });
    expect(page.rows.map((r: FeedbackRow) => r.feedback_id)).toEqual(rows.slice(-3).map((r) => r.feedback_id));
    expect(page.rows[2]).toMatchObject({
      text: rows[ROWS - 1].text,
      rating: rows[ROWS - 1].rating,
      channel: rows[ROWS - 1].channel,
      extra: rows[ROWS - 1].extra,
    });
    const q = await call('extract_evidence', { feedback_ids: [rows[150_001].feedback_id] });
    expect(q.evidence).toEqual([expect.objectContaining({ feedback_id: rows[150_001].feedback_id, evidence_text: rows[150_001].text.trim() })]);
  }, 60_000);
});

describe('themes fitted on a sample', () => {
  let rows: FeedbackRow[];
  beforeAll(async () => {
    const ws = createTempWorkspace();
    const file = join(ws.root, ws.addInput('f.csv', ''));
    await writeFeedbackCsv(file, 6000, 3);
    const parsed = parseFeedbackCsv(readFileSync(file, 'utf8'));
    ws.dispose();
    if (!parsed.ok) throw new Error(parsed.error);
    rows = parsed.value.rows;
  });

  function sampled(fitRows: number): FeedbackStats {
    const tally = new FeedbackTally();
    for (const r of rows) tally.add(r);
    const a = new FeedbackAnalyser(tally, { language: detectCorpusLanguage(rows.map((r) => r.text)), fitRows });
    rows.forEach((r, i) => a.fits(i) && a.fitRow(i, r.text));
    a.fit();
    rows.forEach((r, i) => a.placeRow(i, r.text));
    a.citedRows();
    return a.finish((i) => rows[i].feedback_id);
  }

  it('counts every row as the whole-corpus analysis does; only the themes come from the sample', () => {
    const exact = analyseFeedback(rows);
    const s = sampled(1500);
    expect(exact.theme_sample).toBeUndefined();
    expect(s.theme_sample).toMatchObject({ rows: 1500, seed: 14 });
    expect(s.analysed_rows).toBe(6000);
    expect(s.sentiment).toEqual(exact.sentiment);
    expect({ r: s.rating_distribution, a: s.average_rating, c: s.channels, d: s.date_range }).toEqual({
      r: exact.rating_distribution,
      a: exact.average_rating,
      c: exact.channels,
      d: exact.date_range,
    });
    expect(s.themes.reduce((x, t) => x + t.mention_count, 0) + s.unclustered_rows).toBe(6000);
    // a top term's rows are counted over every row: the whole-corpus count
    const both = s.top_terms.filter((t) => exact.top_terms.some((e) => e.term === t.term));
    expect(both.length).toBeGreaterThanOrEqual(5);
    for (const t of both) expect(t.rows).toBe(exact.top_terms.find((e) => e.term === t.term)?.rows);
    // the same problems surface, fitted on a quarter of the rows
    // (a problem is the same when its leading term shares a word with one of the other fit's two
    // leading terms: "keep crash" and "crash" are one problem named from different rows)
    const words = (stems: string[]) => stems.flatMap((k) => k.split(' '));
    const lead = (st: FeedbackStats) => st.themes.map((t) => words(t.key_stems.slice(0, 1)));
    const known = new Set(exact.themes.flatMap((t) => words(t.key_stems.slice(0, 2))));
    const shared = lead(s).filter((ws) => ws.some((w) => known.has(w)));
    // (topic themes are as many as the topics found, small ones included: most, not all but two)
    expect(shared.length).toBeGreaterThanOrEqual(Math.ceil(0.6 * Math.min(s.themes.length, exact.themes.length)));
    // each theme's ids are its own most central rows
    for (const t of s.themes) expect(t.feedback_ids.length).toBe(Math.min(20, t.mention_count));
  });

  it('is the same every time', () => {
    expect(JSON.stringify(sampled(1500))).toBe(JSON.stringify(sampled(1500)));
  });

  it('draws exactly the sample size, spread over the whole file', () => {
    const m = sampleRows(100_000, 10_000, 14);
    const inHalf = (from: number) => m.subarray(from, from + 50_000).reduce((x, v) => x + v, 0);
    expect(inHalf(0) + inHalf(50_000)).toBe(10_000);
    expect(Math.abs(inHalf(0) - 5000)).toBeLessThan(300);
    expect(sampleRows(10, 20, 14).every((v) => v === 1)).toBe(true);
  });
});
