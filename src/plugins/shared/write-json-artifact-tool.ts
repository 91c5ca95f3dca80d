/** `write_json_artifact`: checks a JSON artifact against its contract before anything is written. */
import { z } from 'zod';
import type { ArtifactContract, ValidationIssue, WorkspaceAccess } from '../../runtime/agent.js';
import type { ToolDefinition } from '../../tools/tool.js';
import { checkJsonValue, findContract } from '../../tools/artifact-contract-checks.js';
import { errorResult, okResult } from './tool-result.js';

export const writeJsonArtifactArgs = z.object({
  path: z.string().min(1).max(200).describe('file name under artifacts/, ending in .json, e.g. feedback_analysis.json'),
  content: z.union([z.string().max(5_000_000), z.record(z.string(), z.unknown())]).describe('the JSON document, as an object or as a JSON string'),
});
export type WriteJsonArtifactArgs = z.infer<typeof writeJsonArtifactArgs>;

export interface WriteJsonArtifactOptions {
  workspace: WorkspaceAccess;
  contracts: ArtifactContract[];
  /** Plugin-specific checks after the schema passes (e.g. evidence against the index). */
  extraCheck?: (path: string, value: unknown) => Promise<ValidationIssue[]>;
}

export function createWriteJsonArtifactTool(o: WriteJsonArtifactOptions): ToolDefinition<WriteJsonArtifactArgs> {
  const documented = o.contracts.filter((c) => c.type === 'json').map((c) => c.path);
  return {
    name: 'write_json_artifact',
    description: `Write a JSON artifact under artifacts/. Contracted files (${documented.join(', ')}) are checked against their schema first and rejected with the failing field paths.`,
    parameters: writeJsonArtifactArgs,
    // writing the same bytes to the same path twice is writing them once: a crash mid-call is run again
    idempotent: true,
    async execute(args) {
      if (!/\.json$/i.test(args.path)) return errorResult('bad_artifact_path', `path must end in .json, got ${JSON.stringify(args.path)}`);
      let value: unknown = args.content;
      if (typeof args.content === 'string') {
        try {
          value = JSON.parse(args.content);
        } catch (e) {
          return errorResult(
            'invalid_json',
            `${args.path}: content is not valid JSON: ${(e as Error).message}`,
            '',
            'pass the document as an object, or a valid JSON string',
          );
        }
      }
      const contract = findContract(o.contracts, args.path);
      const issues = contract ? checkJsonValue(contract, value) : [];
      if (issues.length === 0 && o.extraCheck) issues.push(...(await o.extraCheck(contract?.path ?? args.path, value)));
      if (issues.length > 0) {
        return errorResult(
          'artifact_rejected',
          `${args.path} rejected: ${issues.length} problem(s); nothing was written`,
          issues.map((i) => i.message).join('\n'),
          'fix the listed fields and call write_json_artifact again',
          { issues: issues.map((i) => i.message) },
        );
      }
      try {
        const written = await o.workspace.writeArtifact(contract?.path ?? args.path, `${JSON.stringify(value, null, 2)}\n`);
        return okResult({ path: written.path, bytes: written.bytes, checked: contract ? 'schema' : 'none' });
      } catch (e) {
        return errorResult('write_refused', `cannot write ${args.path}: ${(e as Error).message}`);
      }
    },
  };
}
