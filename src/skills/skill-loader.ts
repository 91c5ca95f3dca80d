/**
 * Loads skill folders and checks them against a plugin; errors are data. Two formats:
 * - `skill.json` + `SKILL.md` (Runtrail's own format): a manifest of compatible plugins, tools, inputs, scopes;
 * - Agent Skills (agentskills.io): `SKILL.md` alone, with YAML frontmatter `name`, `description`
 *   and optional `license`, `compatibility`, `metadata`, `allowed-tools`; any plugin may use it.
 * A skill is looked up in several folders in order (project, user, builtin): the first that has it wins.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseFrontmatter } from './frontmatter.js';
import { skillManifestSchema, ANY_PLUGIN, type SkillManifest } from './skill-manifest.js';

export interface LoadedSkill {
  manifest: SkillManifest;
  /** SKILL.md without its frontmatter: the method. */
  instructions: string;
  dir: string;
  format: 'skill.json' | 'agent-skill';
  /** Agent Skills only: tools the skill says it uses (`allowed-tools`). */
  allowedTools?: string[];
  /** Soft problems (a name with capitals, a long description): the skill still loads. */
  warnings: string[];
}

export type SkillLoadResult =
  | { ok: true; skill: LoadedSkill }
  | { ok: false; code: 'not_found' | 'invalid'; message: string; issues?: Array<{ path: string; message: string }> };

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** agentskills.io: lowercase letters, digits and single hyphens, at most 64 characters. */
const AGENT_SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function skillDirs(dirs: string | readonly string[]): string[] {
  return (typeof dirs === 'string' ? [dirs] : [...dirs]).map((d) => resolve(d));
}

/** `name` from the first of `dirs` that has a folder of that name (skill.json or SKILL.md). */
export async function loadSkill(dirs: string | readonly string[], name: string): Promise<SkillLoadResult> {
  if (typeof name !== 'string' || !SAFE_NAME.test(name)) {
    return { ok: false, code: 'invalid', message: `skill name ${JSON.stringify(name)} is not a valid folder name` };
  }
  const all = skillDirs(dirs);
  for (const d of all) {
    const dir = join(d, name);
    if (existsSync(join(dir, 'skill.json'))) return loadManifestSkill(dir, name);
    if (existsSync(join(dir, 'SKILL.md'))) return loadAgentSkill(dir, name);
  }
  return { ok: false, code: 'not_found', message: `skill "${name}" not found (no ${all.map((d) => join(d, name, 'SKILL.md')).join(', ') || 'skills folder'})` };
}

async function loadManifestSkill(dir: string, name: string): Promise<SkillLoadResult> {
  let raw: string;
  try {
    raw = await readFile(join(dir, 'skill.json'), 'utf8');
  } catch (e) {
    return { ok: false, code: 'invalid', message: `skill "${name}": cannot read ${join(dir, 'skill.json')} (${(e as Error).message})` };
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
  let md: string;
  try {
    md = await readFile(join(dir, 'SKILL.md'), 'utf8');
  } catch {
    return { ok: false, code: 'invalid', message: `skill "${name}": SKILL.md is missing` };
  }
  const fm = parseFrontmatter(md);
  return { ok: true, skill: { manifest: parsed.data, instructions: fm.ok ? fm.body : md, dir, format: 'skill.json', warnings: [] } };
}

function stringList(v: unknown): string[] | undefined {
  if (typeof v === 'string') return v.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
}

async function loadAgentSkill(dir: string, folder: string): Promise<SkillLoadResult> {
  const file = join(dir, 'SKILL.md');
  const bad = (message: string, path = '(frontmatter)'): SkillLoadResult => ({
    ok: false,
    code: 'invalid',
    message: `${file}: ${path === '(frontmatter)' ? '' : `${path}: `}${message}`,
    issues: [{ path, message }],
  });
  let md: string;
  try {
    md = await readFile(file, 'utf8');
  } catch (e) {
    return bad(`cannot read it (${(e as Error).message})`);
  }
  const fm = parseFrontmatter(md);
  if (!fm.ok) return bad(fm.message);
  if (!fm.hasFrontmatter) return bad('an Agent Skill needs YAML frontmatter with name and description (or a skill.json beside it)');
  const d = fm.data;
  const warnings: string[] = [];
  if (typeof d.name !== 'string' || !d.name.trim()) return bad("is required (the skill folder's name)", 'name');
  const name = d.name.trim();
  if (name !== folder) return bad(`must equal the folder name "${folder}", got "${name}"`, 'name');
  if (!AGENT_SKILL_NAME.test(name)) warnings.push(`${file}: name: "${name}" should use lowercase letters, digits and hyphens only`);
  if (name.length > 64) warnings.push(`${file}: name: longer than 64 characters`);
  if (typeof d.description !== 'string' || !d.description.trim()) return bad('is required: say what the skill does and when to use it', 'description');
  const description = d.description.trim();
  if (description.length > 1024) warnings.push(`${file}: description: longer than 1024 characters`);
  const allowed = d['allowed-tools'] === undefined ? undefined : stringList(d['allowed-tools']);
  if (d['allowed-tools'] !== undefined && !allowed) return bad('must be a list of tool names (or one space-separated string)', 'allowed-tools');
  for (const k of ['license', 'compatibility']) if (d[k] !== undefined && typeof d[k] !== 'string') return bad('must be a string', k);
  if (d.metadata !== undefined && (typeof d.metadata !== 'object' || d.metadata === null || Array.isArray(d.metadata)))
    return bad('must be a mapping of keys to strings', 'metadata');
  const known = new Set(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools']);
  for (const k of Object.keys(d)) if (!known.has(k)) warnings.push(`${file}: ${k}: not an Agent Skills field (ignored)`);
  const version =
    typeof (d.metadata as Record<string, unknown> | undefined)?.version === 'string' ? String((d.metadata as Record<string, unknown>).version) : '0.0.0';
  const manifest: SkillManifest = {
    name,
    version,
    description,
    compatible_plugins: [ANY_PLUGIN],
    required_tools: [],
    required_inputs: [],
    output_artifacts: [],
    read_scopes: ['input', 'artifacts', 'runtime'],
    write_scopes: ['artifacts'],
  };
  return { ok: true, skill: { manifest, instructions: fm.body, dir, format: 'agent-skill', ...(allowed ? { allowedTools: allowed } : {}), warnings } };
}

/** Every loadable skill of `dirs` (the first folder that has a name wins), plus the folders that failed (with why). */
export async function listSkills(dirs: string | readonly string[]): Promise<{ skills: LoadedSkill[]; errors: Array<{ name: string; message: string }> }> {
  const names = new Set<string>();
  for (const d of skillDirs(dirs)) {
    try {
      for (const e of await readdir(d, { withFileTypes: true }))
        if (e.isDirectory() && (existsSync(join(d, e.name, 'skill.json')) || existsSync(join(d, e.name, 'SKILL.md')))) names.add(e.name);
    } catch {
      // a folder that does not exist has no skills
    }
  }
  const skills: LoadedSkill[] = [];
  const errors: Array<{ name: string; message: string }> = [];
  for (const n of [...names].sort()) {
    const r = await loadSkill(dirs, n);
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
  if (!skill.compatible_plugins.includes(target.plugin) && !skill.compatible_plugins.includes(ANY_PLUGIN)) {
    reasons.push(`skill "${skill.name}" is not compatible with plugin "${target.plugin}" (compatible: ${skill.compatible_plugins.join(', ')})`);
  }
  const missingTools = skill.required_tools.filter((t) => !target.tools.includes(t));
  if (missingTools.length) reasons.push(`plugin "${target.plugin}" lacks tools the skill requires: ${missingTools.join(', ')}`);
  const missingInputs = skill.required_inputs.filter((k) => !target.inputKeys.includes(k));
  if (missingInputs.length) reasons.push(`input lacks fields the skill requires: ${missingInputs.join(', ')}`);
  return reasons;
}
