/** feedbacklens profiles inputs above 5,000 rows with csv_profile through execute_skill. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { defaultSkillsDir } from '../../src/runtime/package-root.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { computeSkillsIn, createExecuteSkillTool } from '../../src/skills/execute-skill-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';

let dir: string;
let svc: RunService;
let registry: ProcessRegistry;
let csv: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-fl-compute-'));
  registry = new ProcessRegistry();
  const texts = [
    'Calendar sync has been broken for a week, tasks never show up in Google Calendar.',
    'Love the new kanban board, dragging cards feels smooth.',
    'The mobile app crashes when I open a project with many tasks.',
    'Exporting reports to PDF is slow and sometimes times out.',
    'Search does not find tasks by tag, very frustrating.',
  ];
  const lines = ['feedback_id,date,channel,rating,plan,text'];
  for (let i = 0; i < 6_000; i++)
    lines.push(`FB-${100000 + i},2026-06-0${(i % 9) + 1},${['app_store', 'in_app', 'email'][i % 3]},${(i % 5) + 1},Pro,"${texts[i % texts.length]}"`);
  csv = join(dir, 'big-feedback.csv');
  writeFileSync(csv, `${lines.join('\n')}\n`);
  const plugin = createFeedbackLensPlugin({
    extraTools: (ctx) => [
      createExecuteSkillTool({ registry, scopeKey: ctx.runId, skills: computeSkillsIn(defaultSkillsDir(), ['csv_profile']), cwd: ctx.workspace.root }),
    ],
    extraToolNames: ['execute_skill'],
  });
  svc = new RunService({ dataDir: dir, agents: [plugin], inputRoots: 'any', env: {}, processRegistry: registry });
});
afterAll(async () => {
  await svc.close();
  await registry.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('feedbacklens with the csv_profile compute skill', () => {
  it('finds csv_profile among the bundled compute skills', () => {
    const skills = computeSkillsIn(defaultSkillsDir());
    expect(skills.map((s) => s.name)).toContain('csv_profile');
    expect(skills.every((s) => s.entry.command.length > 0)).toBe(true);
  });

  it('profiles a 6,000-row input as a skill step with stage events, then completes', async () => {
    const created = await svc.create({ plugin: 'feedbacklens', input: { csv_path: csv, product_name: 'TaskFlow Pro' } });
    const st = await svc.wait(created.run_id);
    const runDir = join(dir, 'runs', st.run_id);
    const events = readFileSync(join(runDir, 'runtime', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { stream: string; data: Record<string, unknown> });
    expect(st.diagnosis, JSON.stringify(st.diagnosis)).toBeNull();
    expect(st.status).toBe('completed');
    const start = events.find((e) => e.stream === 'tool' && e.data.phase === 'start' && e.data.name === 'execute_skill');
    expect(start?.data.kind).toBe('skill');
    const result = events.find((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'execute_skill');
    expect(result?.data.isError).toBe(false);
    const stages = events
      .filter((e) => e.stream === 'process')
      .map((e) => e.data.event as { stage?: string; targetType: string })
      .filter((ev) => ev.targetType === 'skill' && ev.stage)
      .map((ev) => ev.stage);
    // The process buffer coalesces updates within 400 ms: on a fast run earlier stages may be folded
    // into later ones, but what shows is in order and ends with `write`.
    const seen = [...new Set(stages)];
    expect(seen.at(-1)).toBe('write');
    expect(seen).toEqual(['scan', 'aggregate', 'write'].filter((x) => seen.includes(x)));
    expect(seen.filter((x) => !['scan', 'aggregate', 'write'].includes(x as string))).toEqual([]);
    expect(existsSync(join(runDir, 'artifacts', 'csv_profile.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(runDir, 'artifacts', 'csv_profile.json'), 'utf8')).rows).toBe(6_000);
  });
});
