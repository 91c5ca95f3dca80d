/** GET /api/skills: every skill the service can load (skill.json folders and Agent Skills), first folder wins. */
import { basename } from 'node:path';
import { listSkills as loadSkills } from '../runtime/compute-skills.js';

export async function listSkills(
  skillDirs: string | readonly string[],
): Promise<{ skills: Array<Record<string, unknown>>; errors: Array<{ name: string; message: string }> }> {
  const { skills, errors } = await loadSkills(skillDirs);
  return { skills: skills.map((s) => ({ folder: basename(s.dir), ...s.manifest, format: s.format })), errors };
}
