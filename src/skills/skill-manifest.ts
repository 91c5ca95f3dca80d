/** `skill.json`: what a skill is compatible with, needs, produces and may touch. */
import { z } from 'zod';

const name = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, _ . - only');
// a scope is a folder relative to the run folder, never absolute or climbing out
const scope = z
  .string()
  .min(1)
  .refine((s) => !s.startsWith('/') && !/^[A-Za-z]:/.test(s) && !s.split(/[\\/]/).includes('..') && !s.includes('\0'), {
    message: 'must be a folder relative to the run folder (no "..", not absolute)',
  });

/** `compatible_plugins: ["*"]`: any plugin may use the skill (Agent Skills are such skills). */
export const ANY_PLUGIN = '*';

export const skillManifestSchema = z.strictObject({
  name,
  version: z.string().min(1).max(50),
  description: z.string().max(2000).optional(),
  compatible_plugins: z.array(z.union([name, z.literal(ANY_PLUGIN)])).min(1),
  required_tools: z.array(name).default([]),
  required_inputs: z.array(z.string().min(1)).default([]),
  output_artifacts: z.array(z.string().min(1)).default([]),
  read_scopes: z.array(scope).default(['input', 'artifacts', 'runtime']),
  write_scopes: z.array(scope).default(['artifacts']),
  /** Compute-entry skills: an executable (relative to the skill folder) speaking JSON lines on stdout. */
  entry: z
    .strictObject({
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      timeout_s: z.number().positive().max(3600).optional(),
    })
    .optional(),
});

export type SkillManifest = z.infer<typeof skillManifestSchema>;
