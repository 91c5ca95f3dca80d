/**
 * `load_skill { name }` (Agent Skills' progressive disclosure): the system prompt lists each granted
 * skill's name and description; the model loads a skill's body when it needs it, and reads the
 * skill's other files with `read_file skill://<name>/<path>`.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { z } from 'zod';
import type { PathScheme } from '../tools/read-file-tool.js';
import type { ToolDefinition } from '../tools/tool.js';
import { errorResult } from '../tools/tool-result.js';
import type { LoadedSkill } from './skill-loader.js';

export const loadSkillArgs = z.object({ name: z.string().min(1).max(100).describe('the skill to load, as listed in the system prompt') });

const MAX_LISTED_FILES = 100;

/** Files of a skill folder besides SKILL.md, relative to it (scripts/, references/, assets/ …). */
export function skillFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 4 || out.length >= MAX_LISTED_FILES) return;
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue;
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full, depth + 1);
      else if (e.isFile() && !(depth === 0 && (e.name === 'SKILL.md' || e.name === 'skill.json'))) out.push(relative(dir, full).split(sep).join('/'));
      if (out.length >= MAX_LISTED_FILES) return;
    }
  };
  walk(dir, 0);
  return out;
}

/** The `skill://<name>/<path>` resolver of read_file, over the granted skills only. */
export function skillScheme(skills: readonly LoadedSkill[]): PathScheme {
  return (rest) => {
    const slash = rest.indexOf('/');
    const name = slash < 0 ? rest : rest.slice(0, slash);
    const skill = skills.find((s) => s.manifest.name === name);
    if (!skill) throw new Error(`no granted skill "${name}" (granted: ${skills.map((s) => s.manifest.name).join(', ') || 'none'})`);
    return { root: skill.dir, rel: slash < 0 ? 'SKILL.md' : rest.slice(slash + 1) || 'SKILL.md', what: `the folder of skill ${name}` };
  };
}

export function createLoadSkillTool(skills: readonly LoadedSkill[]): ToolDefinition<z.infer<typeof loadSkillArgs>> {
  return {
    name: 'load_skill',
    description: `Load the instructions of one of your skills (${skills.map((s) => s.manifest.name).join(', ')}) before you use it.`,
    parameters: loadSkillArgs,
    async execute(args) {
      const skill = skills.find((s) => s.manifest.name === args.name);
      if (!skill) return errorResult('unknown_skill', `no skill "${args.name}"`, '', `your skills: ${skills.map((s) => s.manifest.name).join(', ') || 'none'}`);
      const files = skillFiles(skill.dir);
      const listing = files.length
        ? `\n\nFiles of this skill (read them with read_file skill://${skill.manifest.name}/<path>):\n${files.map((f) => `- ${f}`).join('\n')}`
        : '';
      return {
        ok: true,
        content: `# Skill ${skill.manifest.name} ${skill.manifest.version}\n\n${skill.instructions.trim()}${listing}`,
        details: { skill: skill.manifest.name, version: skill.manifest.version, files },
      };
    },
  };
}
