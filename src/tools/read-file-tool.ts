/**
 * `read_file { path, offset?, limit? }`: a text file the run may read, by lines. Plain paths are
 * relative to the run folder (input/…, artifacts/…, granted read roots); `scheme://…` paths go to a
 * resolver the caller grants (skill://<name>/<path>, run://<run_id>/artifacts/<path>).
 */
import { z } from 'zod';
import { WorkspacePathError } from './confine-path.js';
import { type ConfinedPath, DEFAULT_READ_BOUNDS, readRegularFile } from './confined-files.js';
import type { FileAccess } from './file-access.js';
import type { ToolDefinition } from './tool.js';
import { errorResult } from './tool-result.js';

export const readFileArgs = z.object({
  path: z.string().min(1).max(2000).describe('input/…, artifacts/…, skill://<skill>/<path> (or another granted scheme)'),
  offset: z.number().int().min(1).optional().describe('first line to return, counting from 1 (default 1)'),
  limit: z.number().int().min(1).max(20_000).optional().describe('how many lines to return (default: up to 2000 lines or 50,000 characters)'),
});
export type ReadFileArgs = z.infer<typeof readFileArgs>;

/** `rest` is what follows `scheme://`; returns the path below the root it is confined to, or throws to refuse. */
export type PathScheme = (rest: string) => ConfinedPath;

export interface ReadFileToolOptions {
  files: Pick<FileAccess, 'readFile'>;
  schemes?: Record<string, PathScheme>;
  /** Most characters returned by one call; default 50,000. */
  maxChars?: number;
}

const DEFAULT_LINES = 2000;

export function createReadFileTool(o: ReadFileToolOptions): ToolDefinition<ReadFileArgs> {
  const maxChars = o.maxChars ?? 50_000;
  const schemes = o.schemes ?? {};
  const schemeList = Object.keys(schemes).map((s) => `${s}://`);
  return {
    name: 'read_file',
    description: `Read a text file by lines: a path relative to the run folder (input/…, artifacts/…)${schemeList.length ? ` or ${schemeList.join(', ')}…` : ''}. Use offset and limit to page through long files.`,
    parameters: readFileArgs,
    // it only reads: a call a crash cut short is run again
    idempotent: true,
    async execute(args) {
      let buf: Buffer;
      let size: number;
      try {
        const m = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(args.path);
        let read: Promise<{ data: Buffer; size: number }>;
        if (m) {
          const scheme = schemes[m[1].toLowerCase()];
          if (!scheme)
            return errorResult(
              'path_refused',
              `${args.path}: unknown scheme ${m[1]}://`,
              '',
              schemeList.length ? `use a run-folder path or ${schemeList.join(', ')}` : 'use a path relative to the run folder',
            );
          let where: ConfinedPath;
          try {
            where = scheme(m[2]);
          } catch (e) {
            return errorResult('path_refused', `cannot read ${args.path}: ${(e as Error).message}`);
          }
          read = readRegularFile(where, DEFAULT_READ_BOUNDS);
        } else {
          read = o.files.readFile(args.path, DEFAULT_READ_BOUNDS);
        }
        ({ data: buf, size } = await read);
      } catch (e) {
        if (e instanceof WorkspacePathError) {
          const code = { refused: 'path_refused', not_found: 'not_found', not_a_file: 'not_a_file', too_slow: 'read_timeout' }[e.refusal];
          return errorResult(code, e.refusal === 'not_found' ? `${args.path} does not exist` : `cannot read ${args.path}: ${e.message}`);
        }
        const code = (e as NodeJS.ErrnoException).code;
        return errorResult(
          code === 'ENOENT' ? 'not_found' : 'read_failed',
          code === 'ENOENT' ? `${args.path} does not exist` : `cannot read ${args.path}: ${(e as Error).message}`,
        );
      }
      if (buf.subarray(0, 8192).includes(0)) return errorResult('binary_file', `${args.path} is a binary file (${size} bytes), not text`);
      const lines = buf.toString('utf8').split(/\r?\n/);
      if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
      const total = lines.length;
      const from = args.offset ?? 1;
      if (from > Math.max(total, 1)) return errorResult('bad_offset', `${args.path} has ${total} lines; offset ${from} is past its end`);
      let to = Math.min(total, from - 1 + (args.limit ?? DEFAULT_LINES));
      let text = lines.slice(from - 1, to).join('\n');
      let cut = false;
      if (text.length > maxChars) {
        // whole lines only: a line that ends exactly at the cut is kept
        const keep = text.slice(0, maxChars);
        const lastNl = text[maxChars] === '\n' ? maxChars : keep.lastIndexOf('\n');
        text = lastNl > 0 ? keep.slice(0, lastNl) : keep;
        to = from - 1 + text.split('\n').length;
        cut = true;
      }
      const partial = from > 1 || to < total || size > buf.length;
      const more = to < total || size > buf.length;
      const note = partial
        ? `\n[${args.path}: lines ${from}–${to} of ${total}${size > buf.length ? '+ (file larger than read)' : ''}${more ? `; call read_file with offset=${to + 1} to read on` : ''}]`
        : '';
      return {
        ok: true,
        content: `${text}${note}`,
        details: { path: args.path, from_line: from, to_line: to, total_lines: total, bytes: size, truncated: cut || more },
      };
    },
  };
}
