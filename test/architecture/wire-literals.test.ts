/**
 * Sentinel: wire frames are built only in src/events/ (engine-event.ts factories and the
 * bridge). A wire literal anywhere else under src/ is a second implementation waiting to drift.
 */
import { describe, expect, it } from 'vitest';
import { readSource, sourceFiles, stripComments } from './source-files.js';

const PATTERNS: Array<[string, RegExp]> = [
  // { type: 'delta' … }, "type":"step", type: `done`
  ['wire type literal', /["']?\btype["']?\s*:\s*["'`](delta|reasoning|step|done)["'`]/],
  ['wire error frame', /["']?\btype["']?\s*:\s*["'`]error["'`]\s*,\s*["']?message["']?\s*:/],
  ['wire process frame', /["']?\btype["']?\s*:\s*["'`]process["'`]\s*,\s*["']?event["']?\s*:/],
  ['wire done keys', /["']?\b(process_steps|used_mcp)["']?\s*:\s*\[/],
];

export function findWireLiterals(file: string, source: string): string[] {
  const hits: string[] = [];
  const lines = stripComments(source).split('\n');
  lines.forEach((line, i) => {
    for (const [what, re] of PATTERNS) if (re.test(line)) hits.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
  });
  return hits;
}

describe('wire frames are built only by src/events/', () => {
  it('no file outside src/events/ writes a wire literal', () => {
    const hits = sourceFiles()
      .filter((f) => !f.startsWith('events/'))
      .flatMap((f) => findWireLiterals(f, readSource(f)));
    expect(hits, `use makeDelta/makeStep/... from events/engine-event.ts or the bridge instead:\n${hits.join('\n')}`).toEqual([]);
  });

  it('the sentinel really catches literals (and ignores look-alikes)', () => {
    expect(findWireLiterals('x.ts', `res.write({ type: 'delta', content: t });`)).toHaveLength(1);
    expect(findWireLiterals('x.ts', `send('{"type":"step","step":{}}')`)).toHaveLength(1);
    expect(findWireLiterals('x.ts', `reply({ type: "error", message: m })`)).toHaveLength(1);
    expect(findWireLiterals('x.ts', `const f = { type: 'process', event };`)).toHaveLength(0);
    expect(findWireLiterals('x.ts', `const f = { type: 'process', event: e };`)).toHaveLength(1);
    expect(findWireLiterals('x.ts', `const f = { process_steps: [] };`)).toHaveLength(1);
    expect(findWireLiterals('x.ts', `yield { type: 'text-delta', text };`)).toHaveLength(0);
    expect(findWireLiterals('x.ts', `if (f.type === 'delta') n++;`)).toHaveLength(0);
    expect(findWireLiterals('x.ts', `yield { type: 'error', diagnosis };`)).toHaveLength(0);
    expect(findWireLiterals('x.ts', `// e.g. { type: 'delta' }`)).toHaveLength(0);
  });
});
