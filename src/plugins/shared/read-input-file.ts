/** Read an input file through the workspace, tolerating the runtime's copy into input/. */
import { open, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { WorkspaceAccess } from '../../runtime/agent.js';

/**
 * The runtime copies file inputs into input/ when a run is created; depending on who calls,
 * the input may still carry the original name. Try the path as given, then input/<basename>.
 */
export async function readInputBytes(ws: WorkspaceAccess, p: string): Promise<{ bytes: Uint8Array; resolved: string }> {
  const candidates = [p];
  const inInput = `input/${basename(p)}`;
  if (!p.startsWith('input/')) candidates.push(inInput);
  let firstError: unknown;
  for (const c of candidates) {
    try {
      const resolved = ws.resolveRead(c);
      return { bytes: await readFile(resolved), resolved };
    } catch (e) {
      firstError ??= e;
    }
  }
  throw firstError;
}

/**
 * The same candidates as readInputBytes, for a reader that streams the file: the first one that
 * opens. Throws what the first candidate threw (its message names the path).
 */
export async function resolveInputFile(ws: WorkspaceAccess, p: string): Promise<string> {
  const candidates = [p];
  if (!p.startsWith('input/')) candidates.push(`input/${basename(p)}`);
  let firstError: unknown;
  for (const c of candidates) {
    try {
      const resolved = ws.resolveRead(c);
      const fh = await open(resolved, 'r');
      try {
        // readFile refuses a directory; so does this
        if (!(await fh.stat()).isFile()) throw new Error('EISDIR: illegal operation on a directory, read');
      } finally {
        await fh.close();
      }
      return resolved;
    } catch (e) {
      firstError ??= e;
    }
  }
  throw firstError;
}

/** A runtime JSON file (e.g. evidence_index.json) of this run, or null when absent or unreadable. */
export async function readRuntimeJson(ws: WorkspaceAccess, name: string): Promise<unknown | null> {
  let textValue: string;
  try {
    textValue = await ws.readText(`runtime/${name}`);
  } catch {
    try {
      textValue = await readFile(`${ws.root}/runtime/${name}`, 'utf8');
    } catch {
      return null;
    }
  }
  try {
    return JSON.parse(textValue);
  } catch {
    return null;
  }
}
