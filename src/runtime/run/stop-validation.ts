/**
 * Stop hooks, the run's last check before it may complete: required outputs exist, the artifact contract holds (JSON parses and
 * matches its schema, Markdown has its headings), then the plugin's own validators.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactContract, Agent, ValidationIssue, WorkspaceAccess } from '../agent.js';
import type { StopHook } from '../run-hooks.js';
import { checkArtifactText } from '../../tools/artifact-contract-checks.js';

async function readArtifact(artifactsDir: string, rel: string): Promise<string | null> {
  try {
    return await readFile(join(artifactsDir, rel), 'utf8');
  } catch {
    return null;
  }
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
        issues.push(...checkArtifactText(a, text));
      }
      return issues;
    },
  };
}

export function pluginValidatorHooks<Input>(plugin: Agent<Input>, ctx: { runId: string; input: Input; workspace: WorkspaceAccess }): StopHook[] {
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
