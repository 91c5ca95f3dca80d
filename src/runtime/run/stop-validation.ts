/**
 * Stop hooks, the run's last check before it may complete: required outputs exist, the artifact contract holds (JSON parses and
 * matches its schema, Markdown has its headings), then the plugin's own validators.
 */
import type { ArtifactContract, Agent, ValidationIssue, WorkspaceAccess } from '../agent.js';
import type { StopHook } from '../run-hooks.js';
import { checkArtifactText } from '../../tools/artifact-contract-checks.js';
import { WorkspacePathError } from '../../tools/confine-path.js';
import { DEFAULT_READ_BOUNDS, readRegularFile } from '../../tools/confined-files.js';

/**
 * A contract artifact as the run left it, opened beneath the run folder by descriptor: its text, its
 * absence, or why it is not read (a link leading out, a FIFO, a device, too large, too slow). The
 * reason names the path and the kind, never what a refused file holds.
 */
type ArtifactRead = { text: string } | { absent: true } | { refused: string };

async function readArtifact(runRoot: string, rel: string): Promise<ArtifactRead> {
  try {
    const { data, size } = await readRegularFile({ root: runRoot, rel: `artifacts/${rel}`, what: 'the run folder', allow: artifactsOnly });
    if (size > data.length) return { refused: `artifacts/${rel} is larger than ${DEFAULT_READ_BOUNDS.maxBytes} bytes (${size}); not checked` };
    return { text: data.toString('utf8') };
  } catch (e) {
    if (e instanceof WorkspacePathError && e.refusal === 'not_found') return { absent: true };
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { absent: true };
    if (e instanceof WorkspacePathError) return { refused: `artifacts/${rel} ${e.reason}` };
    return { refused: `artifacts/${rel} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}

function artifactsOnly(names: readonly string[]): string | null {
  return names[0] === 'artifacts' ? null : 'leads outside artifacts/';
}

/** `runRoot` is the run folder (artifacts/ is opened inside it, so an artifacts/ swapped for a link is seen). */
export function requiredOutputHook(runRoot: string, contract: ArtifactContract[]): StopHook {
  return {
    name: 'RequiredOutput',
    async check() {
      const issues: ValidationIssue[] = [];
      for (const a of contract.filter((c) => c.required)) {
        const r = await readArtifact(runRoot, a.path);
        if ('absent' in r) issues.push({ check: 'required_output', path: a.path, message: `required artifact ${a.path} was not created` });
        else if ('refused' in r) issues.push({ check: 'required_output', path: a.path, message: `required artifact ${a.path} is not usable: ${r.refused}` });
      }
      return issues;
    },
  };
}

export function artifactContractHook(runRoot: string, contract: ArtifactContract[]): StopHook {
  return {
    name: 'ArtifactContract',
    async check() {
      const issues: ValidationIssue[] = [];
      for (const a of contract) {
        const r = await readArtifact(runRoot, a.path);
        if ('absent' in r) continue; // absence is RequiredOutput's concern
        if ('refused' in r) issues.push({ check: 'artifact_unreadable', path: a.path, message: r.refused });
        else issues.push(...checkArtifactText(a, r.text));
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
