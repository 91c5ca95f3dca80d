/**
 * Schedules declared in the project: `.runtrail/schedules.json` (named schedules) and `schedule:` in
 * an agent's frontmatter (the agent is implied; the schedule is named after it). Each is checked as
 * the API checks a schedule; what is wrong is a definition problem (`runtrail validate` lists them),
 * and only what is right is scheduled. config.json's trigger keys are checked here too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DefinitionProblem } from '../extensions/definition-problem.js';
import type { ExtensionRegistry } from '../extensions/extension-registry.js';
import { checkScheduleDefinition, type DefinitionContext } from './schedule-definition.js';
import { triggerConfig } from './trigger-config.js';
import type { FieldIssue, ScheduleDefinition } from './types.js';

export const SCHEDULES_FILE = 'schedules.json';
/** A declared schedule's name; `sch_` is kept for schedules made through the API. */
export const DECLARED_ID = /^(?!sch_)[a-z0-9][a-z0-9_-]{0,63}$/;

export interface DeclaredSchedule {
  id: string;
  /** the file as the user knows it */
  file: string;
  definition: ScheduleDefinition;
}

type RegistryView = Pick<ExtensionRegistry, 'projectDir' | 'entries'>;

function problems(file: string, issues: FieldIssue[], prefix = ''): DefinitionProblem[] {
  return issues.map((i) => ({ file, field: [prefix, i.path].filter(Boolean).join('.'), message: i.message, level: 'error' as const }));
}

/** Every schedule the project declares, and the problems of those it cannot schedule. */
export function declaredSchedules(registry: RegistryView, ctx: DefinitionContext): { schedules: DeclaredSchedule[]; problems: DefinitionProblem[] } {
  const out: DeclaredSchedule[] = [];
  const found: DefinitionProblem[] = [];
  const shown = `.runtrail/${SCHEDULES_FILE}`;
  const path = join(registry.projectDir, '.runtrail', SCHEDULES_FILE);
  if (existsSync(path)) {
    let raw: unknown = null;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      found.push({ file: shown, message: `is not valid JSON: ${(e as Error).message}`, level: 'error' });
    }
    if (raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
      found.push({ file: shown, message: 'must be an object of named schedules: { "nightly-report": { "agent": …, "cron": "0 6 * * *" } }', level: 'error' });
    } else if (raw) {
      for (const [id, def] of Object.entries(raw as Record<string, unknown>)) {
        if (!DECLARED_ID.test(id)) {
          found.push({
            file: shown,
            field: id,
            message: 'a schedule name is lowercase letters, digits, - and _ (at most 64, not starting with sch_)',
            level: 'error',
          });
          continue;
        }
        const c = checkScheduleDefinition(def, ctx, { pastAt: false });
        if (c.ok) out.push({ id, file: shown, definition: c.value });
        else found.push(...problems(shown, c.issues, id));
      }
    }
  }
  for (const e of registry.entries()) {
    const raw = e.definition?.schedule;
    if (raw === undefined) continue;
    const file = e.source.file ?? e.agent.name;
    const c = checkScheduleDefinition(raw, ctx, { agent: e.agent.name, prefix: 'schedule.', pastAt: false });
    if (!c.ok) {
      found.push(...problems(file, c.issues));
      continue;
    }
    if (out.some((s) => s.id === e.agent.name)) {
      found.push({
        file,
        field: 'schedule',
        message: `${shown} already has a schedule named "${e.agent.name}"; this one is not scheduled (rename one of them)`,
        level: 'error',
      });
      continue;
    }
    out.push({ id: e.agent.name, file, definition: c.value });
  }
  return { schedules: out, problems: found };
}

/** config.json's `webhooks` and `schedules` problems, as `validate` lists them. */
export function triggerConfigProblems(config: { webhooks?: unknown; schedules?: unknown }): DefinitionProblem[] {
  return problems('config.json', triggerConfig(config).issues);
}
