/** GET /api/skills: each skills/<name>/skill.json as declared (the runtime validates them when a run uses one). */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function listSkills(skillsDir: string): Promise<Array<Record<string, unknown>>> {
  let names: string[];
  try {
    names = (await readdir(skillsDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch {
    return [];
  }
  const out: Array<Record<string, unknown>> = [];
  for (const n of names) {
    try {
      const j: unknown = JSON.parse(await readFile(join(skillsDir, n, 'skill.json'), 'utf8'));
      if (j && typeof j === 'object' && !Array.isArray(j)) out.push({ folder: n, ...(j as Record<string, unknown>) });
    } catch {
      /* a folder without a readable skill.json is not a skill */
    }
  }
  return out;
}
