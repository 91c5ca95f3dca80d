// `npm run bench`: runs every bench/*.bench.js next to this file in turn, each in a process of its own
// (a bench must not inherit the heap, JIT state or leftover handles of the ones before it); each
// prints its own ratios. `npm run bench -- mcp sse` runs the benches whose file names contain a word.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const runOne = `const m = await import(${JSON.stringify('__URL__')}); if (typeof m.run !== 'function') throw new Error('__FILE__ must export run()'); await m.run(); process.exit(0);`;

let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f.replace(/\.bench\.js$/, '')}`);
  const code = runOne.replace('__URL__', pathToFileURL(join(here, f)).href).replace('__FILE__', f);
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`bench ${f} failed (${r.signal ?? `exit ${r.status}`})`);
  }
}
if (failed) process.exitCode = 1;
