/**
 * A file's new content put in place atomically: written whole to `tmp` (writeWholeFile), then renamed
 * over `target`, so a reader sees the old file or the new one, never half of it.
 */
import { rename } from 'node:fs';
import { writeWholeFile } from '../events/whole-file-write.js';

export async function replaceFile(tmp: string, target: string, content: string): Promise<void> {
  await writeWholeFile(tmp, content, 'w');
  await new Promise<void>((resolve, reject) => rename(tmp, target, (err) => (err ? reject(err) : resolve())));
}
