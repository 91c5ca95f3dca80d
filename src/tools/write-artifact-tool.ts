/**
 * `write_artifact { path, content }`: a file under artifacts/. A JSON artifact is parsed and checked
 * against its contract's schema before anything is written, so the model can fix it at once; a
 * Markdown artifact is written and the headings its contract still lacks are named in the result.
 */
import { z } from 'zod';
import { checkJsonValue, checkMarkdown, findContract, parseJsonArtifact, type ArtifactContentContract } from './artifact-contract-checks.js';
import type { FileAccess } from './file-access.js';
import type { ToolDefinition } from './tool.js';
import { errorResult, okResult } from './tool-result.js';

export const writeArtifactArgs = z.object({
  path: z.string().min(1).max(500).describe('path under artifacts/, e.g. NOTES.md or data/summary.json'),
  content: z
    .union([z.string().max(10_000_000), z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .describe('the file content (a JSON artifact may be given as an object)'),
});
export type WriteArtifactArgs = z.infer<typeof writeArtifactArgs>;

export function createWriteArtifactTool(o: {
  workspace: Pick<FileAccess, 'writeArtifact'>;
  contracts: ArtifactContentContract[];
}): ToolDefinition<WriteArtifactArgs> {
  const contracted = o.contracts.map((c) => c.path);
  return {
    name: 'write_artifact',
    description: `Write a file under artifacts/.${contracted.length ? ` Contracted artifacts (${contracted.join(', ')}) are checked as they are written: a JSON one that does not match its schema is rejected with the failing fields.` : ''}`,
    parameters: writeArtifactArgs,
    // the same bytes to the same path: a call cut short by a crash is written again, whole
    idempotent: true,
    async execute(args) {
      const contract = findContract(o.contracts, args.path);
      const isJson = contract ? contract.type === 'json' : /\.json$/i.test(args.path);
      let text: string;
      if (isJson) {
        let value: unknown = args.content;
        if (typeof args.content === 'string') {
          const p = parseJsonArtifact(args.path, args.content);
          if (!p.ok)
            return errorResult(
              'invalid_json',
              `${args.path} rejected: ${p.issue.message}; nothing was written`,
              '',
              'send valid JSON (or the document as an object)',
            );
          value = p.value;
        }
        const issues = contract ? checkJsonValue(contract, value) : [];
        if (issues.length) {
          return errorResult(
            'artifact_rejected',
            `${args.path} rejected: ${issues.length} problem(s) with its schema; nothing was written`,
            issues.map((i) => i.message).join('\n'),
            'fix the listed fields and call write_artifact again',
            { issues: issues.map((i) => i.message) },
          );
        }
        text = `${JSON.stringify(value, null, 2)}\n`;
      } else {
        if (typeof args.content !== 'string') return errorResult('bad_content', `${args.path} is not a JSON artifact: content must be text`);
        text = args.content;
      }
      let written: { path: string; bytes: number };
      try {
        written = await o.workspace.writeArtifact(contract?.path ?? args.path, text);
      } catch (e) {
        return errorResult('write_refused', `cannot write ${args.path}: ${(e as Error).message}`);
      }
      const todo = contract && contract.type === 'markdown' ? checkMarkdown(contract, text).map((i) => i.message) : [];
      return okResult({
        path: written.path,
        bytes: written.bytes,
        checked: contract ? contract.type : 'none',
        ...(todo.length ? { still_missing: todo } : {}),
      });
    },
  };
}
