/** End to end over the real builtin plugins, bundled skills and the offline model. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../../src/plugins/builtin-plugins.js';
import { loadComputeSkills } from '../../../src/runtime/compute-skills.js';
import { defaultSkillsDir } from '../../../src/runtime/package-root.js';
import { runtrailPackageRoot } from '../../../src/runtime/package-root.js';
import { RunService } from '../../../src/runtime/service/run-service.js';

let dir: string;
let svc: RunService;
const root = runtrailPackageRoot();
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-fl-'));
  svc = new RunService({ dataDir: dir, agents: builtinPlugins(), inputRoots: 'any', env: {} });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('feedbacklens offline run', () => {
  it('completes with three valid artifacts listed in the manifest', async () => {
    const created = await svc.create({ plugin: 'feedbacklens', input: { csv_path: join(root, 'examples', 'feedback.csv'), product_name: 'TaskFlow Pro' } });
    const st = await svc.wait(created.run_id);
    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(st.provider).toBe('offline');
    expect(st.skill).toBe('feedback_analysis');
    const runDir = join(dir, 'runs', st.run_id);
    for (const f of ['artifacts/feedback_analysis.json', 'artifacts/product_backlog.json', 'artifacts/insight_report.md', 'runtime/evidence_index.json']) {
      expect(existsSync(join(runDir, f)), f).toBe(true);
    }
    expect(st.public_documents.map((d) => d.path).sort()).toEqual([
      'artifacts/feedback_analysis.json',
      'artifacts/insight_report.md',
      'artifacts/product_backlog.json',
    ]);
    const cfg = JSON.parse(readFileSync(join(runDir, 'runtime', 'resolved_config.json'), 'utf8'));
    expect(cfg.model.provider).toBe('offline');
    const todo = JSON.parse(readFileSync(join(runDir, 'runtime', 'todo_state.json'), 'utf8'));
    expect(todo.todos.every((t: { status: string }) => t.status === 'completed')).toBe(true);
  });

  it('rejects a missing CSV and an unknown input field before creating anything', async () => {
    await expect(svc.create({ plugin: 'feedbacklens', input: { csv_path: join(dir, 'nope.csv') } })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(svc.create({ plugin: 'feedbacklens', input: { csv_path: join(root, 'examples', 'feedback.csv'), colour: 'red' } })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});

describe('file_summary offline run', () => {
  it('completes with summary.md', async () => {
    const created = await svc.create({ plugin: 'file_summary', input: { path: join(root, 'examples', 'notes.md') } });
    const st = await svc.wait(created.run_id);
    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(st.public_documents.map((d) => d.path)).toEqual(['artifacts/summary.md']);
  });
});

describe('bundled skills', () => {
  it('csv_profile is a compute skill for feedbacklens', async () => {
    const compute = await loadComputeSkills(defaultSkillsDir(), 'feedbacklens');
    expect(compute.map((c) => c.name)).toEqual(['csv_profile']);
    expect(compute[0].entry.command).toBe('node');
    expect(await loadComputeSkills(defaultSkillsDir(), 'file_summary')).toEqual([]);
  });
});
