import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import type { ValidationIssue } from '../../src/runtime/agent.js';
import { contractValidator } from '../../src/plugins/shared/contract-validator.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';

let ws: TempWorkspace;
const plugin = createFeedbackLensPlugin();
const art = (name: string) => `${ws.root}/artifacts/${name}`;

async function allChecks(): Promise<ValidationIssue[]> {
  const ctx = { runId: 'r', input: { csv_path: 'input/fb.csv' }, workspace: ws };
  const out: ValidationIssue[] = [];
  for (const v of [contractValidator(plugin.artifacts), ...plugin.validators]) out.push(...(await v.validate(ctx as never)));
  return out;
}

function edit(name: string, change: (doc: any) => void): void {
  // any: tests poke arbitrary fields
  const doc = JSON.parse(readFileSync(art(name), 'utf8'));
  change(doc);
  writeFileSync(art(name), JSON.stringify(doc));
}

beforeEach(async () => {
  ws = createTempWorkspace();
  const csv = ws.addInput('fb.csv', readFileSync('examples/feedback.csv'));
  const r = await driveOffline(plugin, { csv_path: csv, product_name: 'TaskFlow Pro' }, ws);
  expect(r.issues).toEqual([]);
});
afterEach(() => ws.dispose());

describe('feedbacklens stop checks', () => {
  it('1: a missing required file is named', async () => {
    rmSync(art('insight_report.md'));
    expect(await allChecks()).toEqual([
      { check: 'required_output', path: 'insight_report.md', message: 'required artifact insight_report.md was not created' },
    ]);
  });
  it('2: a JSON file that does not parse is named', async () => {
    writeFileSync(art('product_backlog.json'), '{"items": [');
    const issues = await allChecks();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ check: 'json_parse', path: 'product_backlog.json' });
  });
  it('3: a wrong enum names file, field path and value', async () => {
    edit('product_backlog.json', (d) => (d.items[1].priority = 'urgent'));
    expect((await allChecks()).map((i) => i.message)).toEqual(['product_backlog.json: items[1].priority: expected one of P0|P1|P2|P3, got "urgent"']);
  });
  it('3: a missing field and a wrong type name the field path', async () => {
    edit('feedback_analysis.json', (d) => {
      delete d.themes[0].title;
      d.sentiment.positive = 'many';
    });
    const messages = (await allChecks()).map((i) => i.message);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/^feedback_analysis\.json: sentiment\.positive: .*"many"/);
    expect(messages[1]).toMatch(/^feedback_analysis\.json: themes\[0\]\.title: /);
  });
  it('4: a missing heading is named', async () => {
    const md = readFileSync(art('insight_report.md'), 'utf8').replace('## Method', '## How');
    writeFileSync(art('insight_report.md'), md);
    const issues = await allChecks();
    expect(issues).toHaveLength(1);
    expect(issues[0].message).toMatch(/^insight_report\.md lacks the heading "Method"/);
  });
  it('5: an invented feedback_id is named with its path', async () => {
    edit('product_backlog.json', (d) => (d.items[0].evidence[0].feedback_id = 'FB-9999'));
    expect(await allChecks()).toEqual([
      {
        check: 'feedback_id_exists',
        path: 'product_backlog.json',
        message: 'product_backlog.json: items[0].evidence[0].feedback_id: "FB-9999" is not in the evidence index',
      },
    ]);
  });
  it('6: a quote that is not in its row is named with its path and value', async () => {
    edit('feedback_analysis.json', (d) => (d.themes[0].evidence[0].evidence_text = 'The app is perfect'));
    const issues = await allChecks();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ check: 'evidence_verbatim', path: 'feedback_analysis.json' });
    expect(issues[0].message).toMatch(
      /^feedback_analysis\.json: themes\[0\]\.evidence\[0\]\.evidence_text: "The app is perfect" is not a verbatim part of feedback "FB-/,
    );
  });
  it('6: a real quote attributed to the wrong row fails', async () => {
    edit('feedback_analysis.json', (d) => (d.themes[0].evidence[0].feedback_id = d.themes[1].evidence[0].feedback_id));
    expect((await allChecks()).map((i) => i.check)).toEqual(['evidence_verbatim']);
  });
  it('6: an evidence index rewritten after a check is read again (no earlier lookup is trusted)', async () => {
    expect(await allChecks()).toEqual([]);
    const analysis = JSON.parse(readFileSync(art('feedback_analysis.json'), 'utf8'));
    const cited = analysis.themes[0].evidence[0];
    const indexFile = `${ws.root}/runtime/evidence_index.json`;
    const index = readFileSync(indexFile, 'utf8');
    const line = index.split('\n').find((l) => l.startsWith(`{"feedback_id":${JSON.stringify(cited.feedback_id)},`))!;
    const entry = JSON.parse(line.replace(/,$/, ''));
    const changed = JSON.stringify({ ...entry, text: 'A different text altogether.' });
    writeFileSync(indexFile, index.replace(line, line.endsWith(',') ? `${changed},` : changed));
    const issues = await allChecks();
    expect(issues.map((i) => i.check)).toContain('evidence_verbatim');
    expect(issues.find((i) => i.check === 'evidence_verbatim')!.message).toContain(`is not a verbatim part of feedback ${JSON.stringify(cited.feedback_id)}`);
  });
  it('5/6: a missing evidence index is reported, not thrown', async () => {
    rmSync(`${ws.root}/runtime/evidence_index.json`);
    const issues = await allChecks();
    expect(issues.map((i) => i.path)).toEqual(['runtime/evidence_index.json', 'runtime/evidence_index.json']);
  });
});
