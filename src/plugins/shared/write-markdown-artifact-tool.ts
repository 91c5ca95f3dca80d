/** `write_markdown_artifact`: writes a Markdown artifact after checking its required headings. */
import { z } from 'zod';
import type { ArtifactContract, WorkspaceAccess } from '../../runtime/agent.js';
import type { ToolDefinition } from '../../tools/tool.js';
import { checkMarkdown, findContract } from '../../tools/artifact-contract-checks.js';
import { errorResult, okResult } from './tool-result.js';

export const writeMarkdownArtifactArgs = z.object({
  path: z.string().min(1).max(200).describe('file name under artifacts/, ending in .md'),
  content: z.string().min(1).max(2_000_000).describe('the Markdown text'),
});
export type WriteMarkdownArtifactArgs = z.infer<typeof writeMarkdownArtifactArgs>;

export function createWriteMarkdownArtifactTool(o: {
  workspace: WorkspaceAccess;
  contracts: ArtifactContract[];
  /** When set, only these paths may be written (e.g. ['summary.md']). */
  onlyPaths?: string[];
  name?: string;
}): ToolDefinition<WriteMarkdownArtifactArgs> {
  const documented = o.contracts.filter((c) => c.type === 'markdown');
  return {
    name: o.name ?? 'write_markdown_artifact',
    description: `Write a Markdown artifact under artifacts/. ${documented
      .map((c) => `${c.path} must contain the headings: ${(c.requiredHeadings ?? []).join(', ')}.`)
      .join(' ')}`,
    parameters: writeMarkdownArtifactArgs,
    // writing the same bytes to the same path twice is writing them once: a crash mid-call is run again
    idempotent: true,
    async execute(args) {
      if (!/\.(md|markdown)$/i.test(args.path)) return errorResult('bad_artifact_path', `path must end in .md, got ${JSON.stringify(args.path)}`);
      const contract = findContract(o.contracts, args.path);
      const target = contract?.path ?? args.path;
      if (o.onlyPaths && !o.onlyPaths.includes(target)) {
        return errorResult('bad_artifact_path', `this tool writes only ${o.onlyPaths.join(', ')}, got ${JSON.stringify(args.path)}`);
      }
      const issues = contract ? checkMarkdown(contract, args.content) : [];
      if (issues.length > 0) {
        return errorResult(
          'artifact_rejected',
          `${args.path} rejected: ${issues.length} problem(s); nothing was written`,
          issues.map((i) => i.message).join('\n'),
          'add the missing headings and call the tool again',
          { issues: issues.map((i) => i.message) },
        );
      }
      try {
        const written = await o.workspace.writeArtifact(target, args.content.endsWith('\n') ? args.content : `${args.content}\n`);
        return okResult({ path: written.path, bytes: written.bytes });
      } catch (e) {
        return errorResult('write_refused', `cannot write ${args.path}: ${(e as Error).message}`);
      }
    },
  };
}
