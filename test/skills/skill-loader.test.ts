import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listSkills, loadSkill, skillIncompatibilities } from '../../src/skills/skill-loader.js';

let dir: string;
const good = {
  name: 'feedback_analysis',
  version: '1.0.0',
  compatible_plugins: ['feedbacklens'],
  required_tools: ['read_feedback_csv'],
  required_inputs: ['csv_path'],
  output_artifacts: ['feedback_analysis.json'],
  read_scopes: ['input', 'runtime'],
  write_scopes: ['artifacts'],
};
function put(name: string, json: unknown, md: string | null = '# Method\n') {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, 'skill.json'), typeof json === 'string' ? json : JSON.stringify(json));
  if (md !== null) writeFileSync(join(dir, name, 'SKILL.md'), md);
}
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-skills-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('skill loader', () => {
  it('loads skill.json and SKILL.md', async () => {
    put('feedback_analysis', good, '# Method\nRead the CSV first.\n');
    const r = await loadSkill(dir, 'feedback_analysis');
    expect(r.ok && r.skill.manifest).toMatchObject(good);
    expect(r.ok && r.skill.instructions).toContain('Read the CSV first.');
  });

  it('fills defaults for optional lists and scopes', async () => {
    put('s', { name: 's', version: '1', compatible_plugins: ['p'] });
    const r = await loadSkill(dir, 's');
    expect(r.ok && r.skill.manifest).toMatchObject({ required_tools: [], read_scopes: ['input', 'artifacts', 'runtime'], write_scopes: ['artifacts'] });
  });

  it('names what is wrong', async () => {
    put('bad_json', '{nope');
    expect(await loadSkill(dir, 'bad_json')).toMatchObject({ ok: false, code: 'invalid', message: expect.stringContaining('not valid JSON') });
    put('bad_fields', { name: 'bad_fields', version: '1', compatible_plugins: [], write_scopes: ['../etc'], extra: 1 });
    const r = await loadSkill(dir, 'bad_fields');
    expect(r.ok).toBe(false);
    const paths = !r.ok ? (r.issues ?? []).map((i) => i.path) : [];
    expect(paths).toEqual(expect.arrayContaining(['compatible_plugins', 'write_scopes.0', '(root)']));
    put('no_md', { ...good, name: 'no_md' }, null);
    expect(await loadSkill(dir, 'no_md')).toMatchObject({ ok: false, message: expect.stringContaining('SKILL.md') });
    put('mismatch', good);
    expect(await loadSkill(dir, 'mismatch')).toMatchObject({ ok: false, message: expect.stringContaining('declares name') });
    expect(await loadSkill(dir, 'missing')).toMatchObject({ ok: false, code: 'not_found' });
    expect(await loadSkill(dir, '../etc')).toMatchObject({ ok: false, code: 'invalid' });
  });

  it('lists loadable skills and reports the broken ones', async () => {
    put('feedback_analysis', good);
    put('broken', '{');
    const { skills, errors } = await listSkills(dir);
    expect(skills.map((s) => s.manifest.name)).toEqual(['feedback_analysis']);
    expect(errors.map((e) => e.name)).toEqual(['broken']);
  });

  it('explains incompatibilities', () => {
    const m = { ...good, entry: undefined };
    expect(skillIncompatibilities(m, { plugin: 'feedbacklens', tools: ['read_feedback_csv'], inputKeys: ['csv_path'] })).toEqual([]);
    const r = skillIncompatibilities(m, { plugin: 'file_summary', tools: [], inputKeys: [] });
    expect(r.join('\n')).toMatch(/not compatible with plugin "file_summary"/);
    expect(r.join('\n')).toMatch(/read_feedback_csv/);
    expect(r.join('\n')).toMatch(/csv_path/);
  });
});
