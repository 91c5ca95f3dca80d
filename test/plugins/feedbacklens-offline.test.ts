import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { builtinPlugins } from '../../src/plugins/builtin-plugins.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { defaultSkillsDir } from '../../src/runtime/package-root.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';
import { Sink } from '../cli/sink.js';

let ws: TempWorkspace;
afterEach(() => ws?.dispose());

function readJson(name: string): any {
  // any: test reads back documents checked by their schema
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
    // calendar and Outlook sync are one sync problem: near-duplicate themes are merged
    const syncThemes = analysis.themes.filter((t: { key_terms: string[] }) => t.key_terms.slice(0, 2).some((k) => k.split(' ').includes('sync')));
    expect(syncThemes).toHaveLength(1);
    const backlog = readJson('product_backlog.json');
    expect(backlog.items[0].priority).toBe('P0');
    expect(r.finalText).toMatch(/Top issues/);
    const report = readFileSync(`${ws.root}/artifacts/insight_report.md`, 'utf8');
    expect(report).toMatch(/## Executive Summary/);
  });
});

describe('runtrail run feedbacklens on a CSV without feedback text', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('exits 1 with the diagnosis naming the columns and how to name the text column (it used to complete)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-fl-notext-'));
    const csv = join(dir, 'people.csv');
    writeFileSync(csv, 'name,age\nalice,31\nbob,42\n');
    const stdout = new Sink();
    const stderr = new Sink();
    const code = await runCli(['run', 'feedbacklens', '--input', `csv_path=${csv}`], {
      agents: builtinPlugins(),
      stdout,
      stderr,
      env: { RUNTRAIL_DATA_DIR: join(dir, 'data') },
      cwd: dir,
      skillsDir: defaultSkillsDir(),
    });
    const out = stdout.text + stderr.text;
    expect(code).toBe(1);
    expect(out).toMatch(/run run_\S+ failed/);
    expect(out).toContain('no column holds free-text feedback (columns found: "name" ("alice"), "age" ("31"))');
    expect(out).toContain('Name the column that holds the feedback text one of "text"');
    expect(out).not.toContain('mention alice');
    expect(out).not.toContain('stop validation failed');
  }, 30_000);
});
