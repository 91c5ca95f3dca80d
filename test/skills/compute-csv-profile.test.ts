import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecuteSkillTool } from '../../src/skills/execute-skill-tool.js';
import { loadSkill } from '../../src/skills/skill-loader.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { recordingReporter, type ReporterCall } from '../tools/helpers.js';

const SKILLS = resolve(import.meta.dirname, '../../skills');
const ROWS = 20_000;
let ws: string;
let registry: ProcessRegistry;

beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), 'rt-csvprofile-'));
  mkdirSync(join(ws, 'input'));
  const lines = ['id,channel,rating,comment'];
  for (let i = 1; i <= ROWS; i++) {
    const channel = ['app', 'web', 'email', 'phone'][i % 4];
    const rating = i % 10 === 0 ? '' : String((i % 5) + 1);
    const comment = i % 3 === 0 ? `"slow, then ""crashed"" #${i % 50}"` : `ok ${i % 7}`;
    lines.push(`${i},${channel},${rating},${comment}`);
  }
  writeFileSync(join(ws, 'input', 'feedback.csv'), `${lines.join('\n')}\n`);
  registry = new ProcessRegistry();
});
afterAll(async () => {
  await registry.shutdown();
  rmSync(ws, { recursive: true, force: true });
});

async function csvProfileTool() {
  const loaded = await loadSkill(SKILLS, 'csv_profile');
  if (!loaded.ok) throw new Error(loaded.message);
  const { manifest, dir } = loaded.skill;
  expect(manifest.entry).toBeDefined();
  return createExecuteSkillTool({ registry, skills: [{ name: manifest.name, dir, entry: manifest.entry! }], cwd: ws });
}

describe('csv_profile compute skill', () => {
  it('has a valid skill.json declaring an entry and its artifact', async () => {
    const loaded = await loadSkill(SKILLS, 'csv_profile');
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.skill.manifest).toMatchObject({
      name: 'csv_profile',
      compatible_plugins: expect.arrayContaining(['feedbacklens']),
      required_tools: ['execute_skill'],
      required_inputs: ['csv_path'],
      output_artifacts: ['csv_profile.json'],
    });
    expect(loaded.skill.instructions).toMatch(/scan/);
  });

  it(`profiles ${ROWS} rows with stages scan → aggregate → write`, async () => {
    const tool = await csvProfileTool();
    const calls: ReporterCall[] = [];
    const r = await tool.execute({ skill: 'csv_profile', input: { csv_path: 'input/feedback.csv', top_n: 8 } }, { reporter: recordingReporter(calls) });
    expect(r.ok, r.content).toBe(true);
    const p = r.details?.result as {
      rows: number;
      columns: Array<{
        name: string;
        null_rate: number;
        distinct: number;
        top_values: Array<{ value: string; count: number }>;
        numeric?: { min: number; max: number };
      }>;
      output_path: string;
    };
    expect(p.rows).toBe(ROWS);
    expect(p.columns.map((c) => c.name)).toEqual(['id', 'channel', 'rating', 'comment']);
    const [id, channel, rating, comment] = p.columns;
    expect(id.distinct).toBe(ROWS);
    expect(id.numeric).toEqual({ min: 1, max: ROWS, mean: (ROWS + 1) / 2 });
    expect(channel.distinct).toBe(4);
    expect(channel.top_values[0].count).toBe(ROWS / 4);
    expect(rating.null_rate).toBe(0.1);
    expect(comment.distinct).toBe(7 + 50);
    expect(comment.top_values).toHaveLength(8);
    expect(comment.top_values[7].value).toMatch(/^slow, then "crashed" #\d+$/);
    expect(p.output_path).toBe(join('artifacts', 'csv_profile.json'));
    expect(JSON.parse(readFileSync(join(ws, p.output_path), 'utf8')).rows).toBe(ROWS);

    const stages = calls.filter((c) => c.method === 'progress').map((c) => (c.arg as { stage: string }).stage);
    const order = [...new Set(stages)];
    expect(order).toEqual(['scan', 'aggregate', 'write']);
    expect(calls.at(-1)?.method).toBe('complete');
  });

  it('fails clearly on a missing file and on a path outside the workspace', async () => {
    const tool = await csvProfileTool();
    const r = await tool.execute({ skill: 'csv_profile', input: { csv_path: 'input/nope.csv' } });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/does not exist/);
    const r2 = await tool.execute({ skill: 'csv_profile', input: { csv_path: '/etc/passwd' } });
    expect(r2.ok).toBe(false);
    expect(r2.content).toMatch(/outside the workspace/);
    const r3 = await tool.execute({ skill: 'csv_profile', input: {} });
    expect(r3.content).toMatch(/csv_path is required/);
    expect(existsSync(join(ws, 'artifacts', 'nope'))).toBe(false);
  });
});
