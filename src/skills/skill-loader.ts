/** Loads skill folders (`skill.json` + `SKILL.md`) and checks them against a plugin; errors are data. */
import { readFile, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { skillManifestSchema, type SkillManifest } from './skill-manifest.js';

export interface LoadedSkill {
  manifest: SkillManifest;
  /** SKILL.md: the method appended to the system prompt. */
  instructions: string;
  dir: string;
}

export type SkillLoadResult = { ok: true; skill: LoadedSkill } | { ok: false; code: 'not_found' | 'invalid'; message: string; issues?: Array<{ path: string; message: string }> };

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export async function loadSkill(skillsDir: string, name: string): Promise<SkillLoadResult> {
  if (typeof name !== 'string' || !SAFE_NAME.test(name)) {
    return { ok: false, code: 'invalid', message: `skill name ${JSON.stringify(name)} is not a valid folder name` };
  }
  const dir = resolve(skillsDir, name);
  let raw: string;
  try {
    raw = await readFile(join(dir, 'skill.json'), 'utf8');
  } catch {
    return { ok: false, code: 'not_found', message: `skill "${name}" not found (no ${join(dir, 'skill.json')})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    return { ok: false, code: 'invalid', message: `skill "${name}": skill.json is not valid JSON (${(e as Error).message})` };
  }
  const parsed = skillManifestSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
    return { ok: false, code: 'invalid', message: `skill "${name}": skill.json invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues };
  }
  if (parsed.data.name !== name) {
    return { ok: false, code: 'invalid', message: `skill folder "${name}" declares name "${parsed.data.name}"` };
  }
  let instructions: string;
  try {
    instructions = await readFile(join(dir, 'SKILL.md'), 'utf8');
  } catch {
    return { ok: false, code: 'invalid', message: `skill "${name}": SKILL.md is missing` };
  }
  return { ok: true, skill: { manifest: parsed.data, instructions, dir } };
}

/** Every loadable skill under `skillsDir`, plus the folders that failed (with why). */
export async function listSkills(skillsDir: string): Promise<{ skills: LoadedSkill[]; errors: Array<{ name: string; message: string }> }> {
  let names: string[] = [];
  try {
    names = (await readdir(skillsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return { skills: [], errors: [] };
  }
  const skills: LoadedSkill[] = [];
  const errors: Array<{ name: string; message: string }> = [];
  for (const n of names) {
    const r = await loadSkill(skillsDir, n);
    if (r.ok) skills.push(r.skill);
    else errors.push({ name: n, message: r.message });
  }
  return { skills, errors };
}

export interface CompatibilityTarget {
  plugin: string;
  /** names of the tools the plugin offers for this run */
  tools: string[];
  /** keys present in the validated input */
  inputKeys: string[];
}

/** Why `skill` cannot serve this plugin run; empty when it can. */
export function skillIncompatibilities(skill: SkillManifest, target: CompatibilityTarget): string[] {
  const reasons: string[] = [];
  if (!skill.compatible_plugins.includes(target.plugin)) {
    reasons.push(`skill "${skill.name}" is not compatible with plugin "${target.plugin}" (compatible: ${skill.compatible_plugins.join(', ')})`);
  }
  const missingTools = skill.required_tools.filter((t) => !target.tools.includes(t));
  if (missingTools.length) reasons.push(`plugin "${target.plugin}" lacks tools the skill requires: ${missingTools.join(', ')}`);
  const missingInputs = skill.required_inputs.filter((k) => !target.inputKeys.includes(k));
  if (missingInputs.length) reasons.push(`input lacks fields the skill requires: ${missingInputs.join(', ')}`);
  return reasons;
}
