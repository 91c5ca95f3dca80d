/** `read_text_file`: the input document, a bounded slice at a time. */
import { z } from 'zod';
import type { WorkspaceAccess } from '../../../runtime/agent.js';
import type { ToolDefinition } from '../../../tools/tool.js';
import { errorResult, okResult } from '../../shared/tool-result.js';
import { readSourceFile } from '../source-file.js';
import { wordCount } from '../summary-checks.js';

export const readTextFileArgs = z.object({
  offset: z.number().int().min(0).optional().describe('first character to return (default 0)'),
  max_chars: z.number().int().min(100).max(50_000).optional().describe('characters to return (default 20000, at most 50000)'),
});
export type ReadTextFileArgs = z.infer<typeof readTextFileArgs>;

export function createReadTextFileTool(ws: WorkspaceAccess, path: string): ToolDefinition<ReadTextFileArgs> {
  return {
    name: 'read_text_file',
    description: 'Read the input text or Markdown file, a slice at a time (offset/max_chars; next_offset is null at the end).',
    parameters: readTextFileArgs,
    async execute(args) {
      const src = await readSourceFile(ws, path);
      if (!src.ok) return errorResult('unreadable_source', src.error);
      const offset = args.offset ?? 0;
      if (offset > src.text.length) return errorResult('bad_offset', `offset ${offset} is past the end (${src.text.length} characters)`);
      const slice = src.text.slice(offset, offset + (args.max_chars ?? 20_000));
      const next = offset + slice.length;
      return okResult(
        {
          path: src.path,
          total_chars: src.text.length,
          total_words: wordCount(src.text),
          offset,
          returned_chars: slice.length,
          next_offset: next < src.text.length ? next : null,
          text: slice,
        },
        { path: src.path, total_chars: src.text.length, returned_chars: slice.length },
      );
    },
  };
}
