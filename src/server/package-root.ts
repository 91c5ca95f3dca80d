/** The installed package's folder (holds web/dist and skills/), found from this file in src/ or dist/src/. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'runtrail') return dir;
      } catch {
        /* keep walking */
      }
    }
    dir = dirname(dir);
  }
  return process.cwd();
}
