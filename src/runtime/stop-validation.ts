/**
 * Stop hooks (seed 003 step 8): required outputs exist, the artifact contract holds (JSON parses and
 * matches its schema, Markdown has its headings), then the plugin's own validators.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactContract, BusinessPlugin, ValidationIssue, WorkspaceAccess } from './business-plugin.js';
import type { StopHook } from './run-hooks.js';

async function readArtifact(artifactsDir: string, rel: string): Promise<string | null> {
  try {
    return await readFile(join(artifactsDir, rel), 'utf8');
  } catch {
    return null;
  }
}

function headingsOf(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m) out.push(m[1].trim().toLowerCase());
  }
  return out;
}

export function requiredOutputHook(artifactsDir: string, contract: ArtifactContract[]): StopHook {
  return {
    name: 'RequiredOutput',
    async check() {
      const issues: ValidationIssue[] = [];
      for (const a of contract.filter((c) => c.required)) {
        if ((await readArtifact(artifactsDir, a.path)) === null) {
          issues.push({ check: 'required_output', path: a.path, message: `required artifact ${a.path} was not created` });
        }
      }
      return issues;
    },
  };
}

export function artifactContractHook(artifactsDir: string, contract: ArtifactContract[]): StopHook {
  return {
    name: 'ArtifactContract',
    async check() {
      const issues: ValidationIssue[] = [];
      for (const a of contract) {
        const text = await readArtifact(artifactsDir, a.path);
        if (text === null) continue; // absence is RequiredOutput's concern
        if (a.type === 'json') {
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch (e) {
            issues.push({ check: 'json_parse', path: a.path, message: `${a.path} is not valid JSON: ${(e as Error).message}` });
            continue;
          }
          if (a.schema) {
            const r = a.schema.safeParse(value);
            if (!r.success) {
              for (const i of r.error.issues.slice(0, 20)) {
                issues.push({ check: 'json_schema', path: a.path, message: `${a.path}: ${i.path.join('.') || '(root)'}: ${i.message}` });
              }
            }
          }
        }
        if (a.type === 'markdown' && a.requiredHeadings?.length) {
          const have = headingsOf(text);
          for (const h of a.requiredHeadings) {
            if (!have.includes(h.trim().toLowerCase())) issues.push({ check: 'markdown_heading', path: a.path, message: `${a.path} lacks the heading "${h}"` });
          }
        }
      }
      return issues;
    },
  };
}

export function pluginValidatorHooks<Input>(plugin: BusinessPlugin<Input>, ctx: { runId: string; input: Input; workspace: WorkspaceAccess }): StopHook[] {
  return plugin.validators.map((v) => ({
    name: v.name,
    async check() {
      try {
        return await v.validate(ctx);
      } catch (e) {
        return [{ check: v.name, message: `validator ${v.name} crashed: ${(e as Error).message}` }];
      }
    },
  }));
}

export interface StopOutcome {
  ok: boolean;
  byHook: Array<{ hook: string; issues: ValidationIssue[] }>;
}

export async function runStopHooks(hooks: StopHook[]): Promise<StopOutcome> {
  const byHook: StopOutcome['byHook'] = [];
  for (const h of hooks) {
    let issues: ValidationIssue[];
    try {
      issues = await h.check();
    } catch (e) {
      issues = [{ check: h.name, message: `${h.name} crashed: ${(e as Error).message}` }];
    }
    if (issues.length) byHook.push({ hook: h.name, issues });
  }
  return { ok: byHook.length === 0, byHook };
}
