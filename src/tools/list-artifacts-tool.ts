/** `list_artifacts`: what exists under artifacts/, and which required artifacts are still missing. */
import { z } from 'zod';
import type { ArtifactRequirement, FileAccess } from './file-access.js';
import type { ToolDefinition } from './tool.js';
import { errorResult, okResult } from './tool-result.js';

export const listArtifactsArgs = z.object({}).strict();

export function createListArtifactsTool(o: {
  workspace: Pick<FileAccess, 'listArtifacts'>;
  contracts: ArtifactRequirement[];
}): ToolDefinition<Record<string, never>> {
  return {
    name: 'list_artifacts',
    description: 'List the files written under artifacts/ with their sizes, and the required artifacts still missing.',
    parameters: listArtifactsArgs,
    // it only reads: a call a crash cut short is run again
    idempotent: true,
    async execute() {
      try {
        const files = await o.workspace.listArtifacts();
        const have = new Set(files.map((f) => f.path));
        const missing = o.contracts.filter((c) => c.required && !have.has(c.path)).map((c) => c.path);
        return okResult({ artifacts: files, missing_required: missing });
      } catch (e) {
        return errorResult('list_failed', `cannot list artifacts: ${(e as Error).message}`);
      }
    },
  };
}
