import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';

let ws: TempWorkspace;
afterEach(() => ws?.dispose());

function readJson(name: string): any { // any: test reads back documents checked by their schema
  return JSON.parse(readFileSync(`${ws.root}/artifacts/${name}`, 'utf8'));
}

describe('feedbacklens offline procedure', () => {
  it('analyses the bundled TaskFlow Pro example and passes every stop check', async () => {
    ws = createTempWorkspace();
    const csv = ws.addInput('feedback.csv', readFileSync('examples/feedback.csv'));
    const r = await driveOffline(createFeedbackLensPlugin(), { csv_path: csv, product_name: 'TaskFlow Pro' }, ws);
    expect(r.issues).toEqual([]);
    expect(r.toolCalls.every((c) => c.ok)).toBe(true);
    const analysis = readJson('feedback_analysis.json');
    expect(analysis.product_name).toBe('TaskFlow Pro');
    expect(analysis.source.analysed_rows).toBe(224);
    expect(analysis.themes.length).toBeGreaterThanOrEqual(4);
    const titles = analysis.themes.map((t: { title: string; key_terms: string[] }) => [t.title, ...t.key_terms].join(' ').toLowerCase()).join(' | ');
    // the recurring problems written into the example surface as themes without being hard-coded
    expect(titles).toMatch(/sync/);
    expect(titles).toMatch(/crash/);
    expect(titles).toMatch(/pric|price|pay/);
    const backlog = readJson('product_backlog.json');
    expect(backlog.items[0].priority).toBe('P0');
    expect(r.finalText).toMatch(/Top issues/);
    const report = readFileSync(`${ws.root}/artifacts/insight_report.md`, 'utf8');
    expect(report).toMatch(/## Executive Summary/);
  });
});
