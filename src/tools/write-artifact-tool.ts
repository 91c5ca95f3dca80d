/**
 * `write_artifact { path, content }`: a file under artifacts/. A JSON artifact is parsed and checked
 * against its contract's schema before anything is written, so the model can fix it at once; a
 * Markdown artifact is written and the headings its contract still lacks are named in the result.
 */
import { z } from 'zod';
import { checkJsonValue, checkMarkdown, findContract, parseJsonArtifact, type ArtifactContentContract } from './artifact-contract-checks.js';
import type { FileAccess } from './file-access.js';
import type { ToolDefinition, ToolResult } from './tool.js';
import { errorResult, okResult } from './tool-result.js';

export const writeArtifactArgs = z.object({
  path: z.string().min(1).max(500).describe('path under artifacts/, e.g. NOTES.md or data/summary.json'),
  content: z
    .union([z.string().max(10_000_000), z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .describe('the file content (a JSON artifact may be given as an object)'),
});
export type WriteArtifactArgs = z.infer<typeof writeArtifactArgs>;

/** A call's arguments made into the file it writes, or the result that refuses them (nothing written). */
type Prepared = { ok: true; target: string; text: string; contract: ArtifactContentContract | undefined } | { ok: false; result: ToolResult };

/** What a complete `write_artifact` call left on the disk, as recorded before it ran. */
interface WriteIntent {
  path: string;
  bytes: number;
  sha256: string;
}

function isWriteIntent(v: unknown): v is WriteIntent {
  const i = v as WriteIntent | null;
  return !!i && typeof i === 'object' && typeof i.path === 'string' && typeof i.bytes === 'number' && typeof i.sha256 === 'string';
}

export function createWriteArtifactTool(o: {
  workspace: Pick<FileAccess, 'writeArtifact' | 'artifactDigest' | 'artifactOnDisk'>;
  contracts: ArtifactContentContract[];
}): ToolDefinition<WriteArtifactArgs> {
  const contracted = o.contracts.map((c) => c.path);
  const prepare = (args: WriteArtifactArgs): Prepared => {
    const contract = findContract(o.contracts, args.path);
    const isJson = contract ? contract.type === 'json' : /\.json$/i.test(args.path);
    if (!isJson) {
      if (typeof args.content !== 'string')
        return { ok: false, result: errorResult('bad_content', `${args.path} is not a JSON artifact: content must be text`) };
      return { ok: true, target: contract?.path ?? args.path, text: args.content, contract };
    }
    let value: unknown = args.content;
    if (typeof args.content === 'string') {
      const p = parseJsonArtifact(args.path, args.content);
      if (!p.ok)
        return {
          ok: false,
          result: errorResult(
            'invalid_json',
            `${args.path} rejected: ${p.issue.message}; nothing was written`,
            '',
            'send valid JSON (or the document as an object)',
          ),
        };
      value = p.value;
    }
    const issues = contract ? checkJsonValue(contract, value) : [];
    if (issues.length) {
      return {
        ok: false,
        result: errorResult(
          'artifact_rejected',
          `${args.path} rejected: ${issues.length} problem(s) with its schema; nothing was written`,
          issues.map((i) => i.message).join('\n'),
          'fix the listed fields and call write_artifact again',
          { issues: issues.map((i) => i.message) },
        ),
      };
    }
    return { ok: true, target: contract?.path ?? args.path, text: `${JSON.stringify(value, null, 2)}\n`, contract };
  };
  const written = (p: Extract<Prepared, { ok: true }>, w: { path: string; bytes: number }): ToolResult => {
    const todo = p.contract && p.contract.type === 'markdown' ? checkMarkdown(p.contract, p.text).map((i) => i.message) : [];
    return okResult({
      path: w.path,
      bytes: w.bytes,
      checked: p.contract ? p.contract.type : 'none',
      ...(todo.length ? { still_missing: todo } : {}),
    });
  };
  return {
    name: 'write_artifact',
    description: `Write a file under artifacts/.${contracted.length ? ` Contracted artifacts (${contracted.join(', ')}) are checked as they are written: a JSON one that does not match its schema is rejected with the failing fields.` : ''}`,
    parameters: writeArtifactArgs,
    // the same bytes to the same path: a call cut short by a crash is written again, whole
    idempotent: true,
    // the size and hash of the file the call writes: after a crash, a file that has them is complete
    intent(args) {
      const p = prepare(args);
      if (!p.ok || !o.workspace.artifactDigest) return undefined;
      try {
        return o.workspace.artifactDigest(p.target, p.text) satisfies WriteIntent;
      } catch {
        // a path the workspace refuses: the handler says so when it runs
        return undefined;
      }
    },
    async completedBefore(args, intent) {
      const p = prepare(args);
      if (!p.ok || !isWriteIntent(intent) || !o.workspace.artifactOnDisk) return null;
      const disk = await o.workspace.artifactOnDisk(intent.path);
      // a file cut short (or another write since) differs in size or hash: the call is written again
      if (!disk || disk.bytes !== intent.bytes || disk.sha256 !== intent.sha256) return null;
      return written(p, { path: intent.path, bytes: intent.bytes });
    },
    async execute(args) {
      const p = prepare(args);
      if (!p.ok) return p.result;
      let w: { path: string; bytes: number };
      try {
        w = await o.workspace.writeArtifact(p.target, p.text);
      } catch (e) {
        return errorResult('write_refused', `cannot write ${args.path}: ${(e as Error).message}`);
      }
      return written(p, w);
    },
  };
}
