/** The run's input document, read once through the workspace and decoded. */
import { extname } from 'node:path';
import type { WorkspaceAccess } from '../../runtime/agent.js';
import { decodeText } from '../shared/decode-text.js';
import { readInputBytes } from '../shared/read-input-file.js';
import { TEXT_EXTENSIONS } from './input-schema.js';

export type SourceOutcome = { ok: true; text: string; path: string } | { ok: false; error: string };

/** A file with NUL bytes in its first 8 KB is binary, whatever its name. */
function looksBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8192);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

export async function readSourceFile(ws: WorkspaceAccess, path: string): Promise<SourceOutcome> {
  if (!TEXT_EXTENSIONS.includes(extname(path).toLowerCase())) {
    return { ok: false, error: `${path}: only text or Markdown files can be summarised (${TEXT_EXTENSIONS.filter(Boolean).join(', ')})` };
  }
  let bytes: Uint8Array;
  try {
    bytes = (await readInputBytes(ws, path)).bytes;
  } catch (e) {
    return { ok: false, error: `cannot read ${JSON.stringify(path)}: ${(e as Error).message}` };
  }
  const utf16 = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
  if (!utf16 && looksBinary(bytes)) return { ok: false, error: `${path} looks like a binary file, not text` };
  const { text } = decodeText(bytes);
  if (text.trim() === '') return { ok: false, error: `${path} is empty` };
  return { ok: true, text, path };
}
