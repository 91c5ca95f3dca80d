import { afterEach, describe, expect, it } from 'vitest';
import { registerSecret, SECRET_MASK } from '../../src/events/secret-masker.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { createProcessTool } from '../../src/tools/process-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { ownWorkdir } from './helpers.js';

// the server's secret, as its provider key would be: registered for this test file's process
const SECRET = 'sk-proj-Zq7tK2mW9xR4vB8nL3pJ6hG1fD5sA0';
registerSecret(SECRET, 'TEST_KEY');

const WORKDIR = ownWorkdir();
let registry: ProcessRegistry;
afterEach(async () => {
  await registry?.shutdown();
});

/** No run of 4 or more characters of the secret (or of its hex) in `text`. */
function expectNoPart(text: string, what: string): void {
  for (const s of [SECRET, Buffer.from(SECRET).toString('hex')]) {
    for (let i = 0; i + 4 <= s.length; i++) expect(text, `${what}: ${s.slice(i, i + 4)}`).not.toContain(s.slice(i, i + 4));
  }
}

describe('a command printing a secret in pieces, read poll by poll', () => {
  it('each poll sees its piece masked with the pieces before it: nothing of the secret gets out', async () => {
    registry = new ProcessRegistry();
    const exec = createExecTool({ registry, scopeKey: 'run_a', cwd: WORKDIR });
    const proc = createProcessTool({ registry, scopeKey: 'run_a' });
    // the command waits for a line on stdin between pieces, so each poll reads exactly one piece
    const pieces = ['ke', 'y=sk-', 'proj-Zq7tK2m', 'W9xR4vB8nL3pJ6hG1fD5s', 'A0 and more\n'];
    const script = pieces.map((p) => `printf '%s' '${p}'; read x`).join('; ');
    const started = await exec.execute({ command: script, background: true });
    const id = started.details?.sessionId as string;
    const seen: string[] = [];
    const s = registry.get('run_a', id)!;
    for (let i = 0; i < pieces.length; i++) {
      // wait until the piece is there, then poll it
      while (!s.hasPending()) await s.waitForActivity(100);
      const p = await proc.execute({ action: 'poll', sessionId: id });
      seen.push(String(p.details?.stdout ?? ''));
      await proc.execute({ action: 'write', sessionId: id, data: '\n' });
    }
    await s.done;
    const last = await proc.execute({ action: 'poll', sessionId: id });
    seen.push(String(last.details?.stdout ?? ''));
    const all = seen.join('');
    expect(all).toBe(`key=${SECRET_MASK} and more\n`);
    for (const piece of seen) expectNoPart(piece, JSON.stringify(seen));
  });

  it('a tail cut through the secret (the kept output of a long command, an exit notice) shows no rest of it', async () => {
    const cap = 4_000;
    registry = new ProcessRegistry({ maxOutputChars: cap, tailChars: 2_000 });
    const exec = createExecTool({ registry, scopeKey: 'run_a', cwd: WORKDIR });
    for (const keep of [5, 17, SECRET.length - 1]) {
      // the output's last `cap` bytes start `keep` characters before the secret's end
      const after = cap - keep;
      const command = `printf '%s' '${SECRET}'; head -c ${after} /dev/zero | tr '\\0' 'x'`;
      const r = await exec.execute({ command });
      expectNoPart(r.content, `keep ${keep}`);
      expect(r.content).toContain(SECRET_MASK);
      const hexCommand = `printf '%s' '${SECRET}' | xxd -p -c 0 2>/dev/null || printf '%s' '${SECRET}' | od -An -tx1 | tr -d ' \\n'; head -c ${cap - 2 * keep} /dev/zero | tr '\\0' 'x'`;
      const h = await exec.execute({ command: hexCommand });
      expectNoPart(h.content, `hex keep ${keep}`);
    }
  });
});
