/** The capability snapshot of one run: what this run may actually do. */
import { relative, sep } from 'node:path';
import type { ArtifactContract, Agent } from '../agent.js';
import type { SkillManifest } from '../../skills/skill-manifest.js';

export interface ArtifactContractSummary {
  path: string;
  type: ArtifactContract['type'];
  required: boolean;
  audience: ArtifactContract['audience'];
  sensitivity: ArtifactContract['sensitivity'];
  description: string;
  requiredHeadings?: string[];
  hasSchema: boolean;
}

export interface ResolvedRunCapabilities {
  plugin: { name: string; version: string };
  skill: { name: string; version: string } | null;
  allowedTools: string[];
  /** relative to the run folder (e.g. `input`), plus absolute extra roots */
  readRoots: string[];
  writeRoots: string[];
  artifactContract: ArtifactContractSummary[];
}

export function summariseContract(artifacts: ArtifactContract[]): ArtifactContractSummary[] {
  return artifacts.map((a) => ({
    path: a.path,
    type: a.type,
    required: a.required,
    audience: a.audience,
    sensitivity: a.sensitivity,
    description: a.description,
    ...(a.requiredHeadings ? { requiredHeadings: a.requiredHeadings } : {}),
    hasSchema: Boolean(a.schema),
  }));
}

/**
 * Plugin ∩ skill: tools are the plugin's (the skill must not ask for more), reads/writes the skill's scopes
 * (default input+artifacts+runtime / artifacts). `toolNames` are the tools the plugin created for this run.
 */
export function resolveCapabilities(opts: {
  plugin: Pick<Agent, 'name' | 'version' | 'artifacts'>;
  skill: SkillManifest | null;
  toolNames: string[];
  extraReadRoots?: string[];
}): ResolvedRunCapabilities {
  const { plugin, skill } = opts;
  const norm = (s: string) =>
    s
      .split(/[\\/]+/)
      .filter(Boolean)
      .join('/');
  return {
    plugin: { name: plugin.name, version: plugin.version },
    skill: skill ? { name: skill.name, version: skill.version } : null,
    allowedTools: [...new Set(opts.toolNames)],
    readRoots: [...(skill?.read_scopes ?? ['input', 'artifacts', 'runtime']).map(norm), ...(opts.extraReadRoots ?? [])],
    writeRoots: (skill?.write_scopes ?? ['artifacts']).map(norm),
    artifactContract: summariseContract(plugin.artifacts),
  };
}

export function displayRoot(root: string, runRoot: string): string {
  const rel = relative(runRoot, root);
  return rel.startsWith('..') ? root : `runs/<run_id>/${rel.split(sep).join('/')}/`;
}
