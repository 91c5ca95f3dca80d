/** `execute_skill`: the tool through which a model runs a compute-entry skill (a `skill` step on the wire). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ToolDefinition, ToolExecutionContext, ToolResult } from '../tools/tool.js';
import { defaultProcessRegistry } from '../tools/default-process-registry.js';
import type { ProcessRegistry } from '../tools/process-registry.js';
import { DEFAULT_SKILL_TIMEOUT_MS, runComputeSkill, type ComputeSkillSpec } from './compute-skill-runner.js';
import { skillManifestSchema } from './skill-manifest.js';

export const executeSkillParameters = z.object({
  skill: z.string().min(1).describe('Name of the compute skill to run.'),
  input: z.record(z.string(), z.unknown()).optional().describe('Input object passed to the skill (see its SKILL.md).'),
});
export type ExecuteSkillArgs = z.infer<typeof executeSkillParameters>;

export interface ExecuteSkillToolOptions {
  /** Default: the process-wide `defaultProcessRegistry()`. */
  registry?: ProcessRegistry;
  /** Sessions are scoped to this key (the run id) so run cancel can end them (default 'skills'). */
  scopeKey?: string;
  skills: ComputeSkillSpec[];
  /** The run workspace: the skills' cwd. */
  cwd: string;
  timeoutMs?: number;
  maxOutputBytes?: number;
  env?: Record<string, string>;
}

const MAX_CONTENT = 20_000;

export function createExecuteSkillTool(opts: ExecuteSkillToolOptions): ToolDefinition<ExecuteSkillArgs> {
  const byName = new Map(opts.skills.map((s) => [s.name, s]));
  const names = [...byName.keys()];
  return {
    name: 'execute_skill',
    description: `Run a compute skill as a separate process and get its JSON result. Available: ${names.join(', ') || '(none)'}.`,
    parameters: executeSkillParameters,
    kind: 'skill',
    // Outlast the skill's own timeout, so the skill's clean kill and Diagnosis win over the executor's.
    timeoutMs: 30_000 + (opts.timeoutMs ?? Math.max(DEFAULT_SKILL_TIMEOUT_MS, ...opts.skills.map((s) => (s.entry.timeout_s ?? 0) * 1000))),
    async execute(rawArgs: ExecuteSkillArgs, ctx?: ToolExecutionContext): Promise<ToolResult> {
      const parsed = executeSkillParameters.safeParse(rawArgs);
      if (!parsed.success) return bad(`invalid arguments: ${z.prettifyError(parsed.error)}`);
      const skill = byName.get(parsed.data.skill);
      if (!skill) return bad(`unknown compute skill ${JSON.stringify(parsed.data.skill)}`, `Available: ${names.join(', ') || '(none)'}.`);
      const registry = opts.registry ?? defaultProcessRegistry();
      const out = await runComputeSkill({
        registry,
        scopeKey: opts.scopeKey ?? 'skills',
        skill,
        cwd: opts.cwd,
        input: parsed.data.input ?? {},
        env: opts.env,
        timeoutMs: opts.timeoutMs,
        maxOutputBytes: opts.maxOutputBytes,
        reporter: ctx?.reporter?.child({ targetType: 'skill', source: 'skill' }),
        signal: ctx?.signal,
      });
      const details: Record<string, unknown> = {
        skill: skill.name,
        status: out.ok ? 'completed' : 'failed',
        exitCode: out.exitCode,
        signal: out.signal,
        durationMs: out.durationMs,
        progressEvents: out.progressEvents,
        garbageLines: out.garbageLines,
        logs: out.logs.slice(-20),
        stderrTail: out.stderr.slice(-2000),
        ...(out.ok ? { result: out.data } : {}),
      };
      if (!out.ok) {
        return {
          ok: false,
          content: `${out.diagnosis?.summary ?? 'skill failed'}${out.stderr ? `\nstderr:\n${out.stderr.slice(-1000)}` : ''}`,
          details,
          diagnosis: out.diagnosis,
        };
      }
      const json = JSON.stringify(out.data, null, 1) ?? 'null';
      const body = json.length > MAX_CONTENT ? `${json.slice(0, MAX_CONTENT)}\n… (${json.length - MAX_CONTENT} more chars in details.result)` : json;
      return { ok: true, content: `Skill ${skill.name} completed in ${out.durationMs} ms.\n${body}`, details };
    },
  };
}

function bad(message: string, hint = ''): ToolResult {
  return {
    ok: false,
    content: `execute_skill: ${message}${hint ? ` ${hint}` : ''}`,
    details: { status: 'failed', error: message },
    diagnosis: { code: 'execute_skill_bad_input', severity: 'error', summary: message, hint, retryable: false },
  };
}

/**
 * The compute-entry skills under `skillsDir` (those whose skill.json has an `entry`), optionally only
 * `names`. Synchronous so a plugin's `createTools` can call it; invalid folders are skipped.
 */
export function computeSkillsIn(skillsDir: string, names?: string[]): ComputeSkillSpec[] {
  let dirs: string[];
  try {
    dirs = readdirSync(skillsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
  const out: ComputeSkillSpec[] = [];
  for (const name of dirs.sort()) {
    if (names && !names.includes(name)) continue;
    try {
      const m = skillManifestSchema.safeParse(JSON.parse(readFileSync(join(skillsDir, name, 'skill.json'), 'utf8')));
      if (m.success && m.data.entry && m.data.name === name) out.push({ name, dir: join(skillsDir, name), entry: m.data.entry });
    } catch {
      // unreadable skill.json: the skill loader reports it; here it is simply not offered
    }
  }
  return out;
}
