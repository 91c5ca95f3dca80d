import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ArtifactContract } from '../../../src/runtime/agent.js';
import { artifactContractHook, requiredOutputHook, runStopHooks } from '../../../src/runtime/run/stop-validation.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-stop-'));
  mkdirSync(join(dir, 'artifacts'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const contract: ArtifactContract[] = [
  {
    path: 'a.json',
    type: 'json',
    audience: 'user',
    sensitivity: 'internal',
    description: 'a',
    required: true,
    schema: z.object({ items: z.array(z.object({ priority: z.enum(['P0', 'P1']) })) }),
  },
  { path: 'r.md', type: 'markdown', audience: 'user', sensitivity: 'public', description: 'r', required: true, requiredHeadings: ['Summary', 'Top Issues'] },
  { path: 'opt.txt', type: 'text', audience: 'user', sensitivity: 'public', description: 'o', required: false },
];
const hooks = () => [requiredOutputHook(dir, contract), artifactContractHook(dir, contract)];

describe('stop hooks', () => {
  it('pass when every required artifact exists and matches the contract', async () => {
    writeFileSync(join(dir, 'artifacts', 'a.json'), JSON.stringify({ items: [{ priority: 'P0' }] }));
    writeFileSync(join(dir, 'artifacts', 'r.md'), '# Report\n\n## summary\n\ntext\n\n### Top Issues ##\n');
    expect(await runStopHooks(hooks())).toEqual({ ok: true, byHook: [] });
  });

  it('name the missing file, the bad enum, and headings hidden in code fences', async () => {
    writeFileSync(join(dir, 'artifacts', 'a.json'), JSON.stringify({ items: [{ priority: 'urgent' }] }));
    const out = await runStopHooks(hooks());
    expect(out.ok).toBe(false);
    expect(out.byHook.find((h) => h.hook === 'RequiredOutput')?.issues).toEqual([
      { check: 'required_output', path: 'r.md', message: 'required artifact r.md was not created' },
    ]);
    expect(out.byHook.find((h) => h.hook === 'ArtifactContract')?.issues[0].message).toMatch(/a\.json: items\[0\]\.priority: .*urgent/);

    writeFileSync(join(dir, 'artifacts', 'r.md'), '# Report\n\n```md\n## Summary\n```\n## Top Issues\n');
    const out2 = await runStopHooks(hooks());
    expect(out2.byHook.find((h) => h.hook === 'ArtifactContract')?.issues.map((i) => i.message)).toContainEqual(
      expect.stringMatching(/^r\.md lacks the heading "Summary" \(found: "report", "top issues"\)$/),
    );
  });

  it('report unparsable JSON, and a crashing hook as an issue', async () => {
    writeFileSync(join(dir, 'artifacts', 'a.json'), '{"items": [');
    writeFileSync(join(dir, 'artifacts', 'r.md'), '## Summary\n## Top Issues\n');
    const crash = {
      name: 'Crashy',
      check: async () => {
        throw new Error('boom');
      },
    };
    const out = await runStopHooks([...hooks(), crash]);
    expect(out.byHook.map((h) => h.hook)).toEqual(['ArtifactContract', 'Crashy']);
    expect(out.byHook[0].issues[0]).toMatchObject({ check: 'json_parse', path: 'a.json' });
    expect(out.byHook[1].issues[0].message).toContain('boom');
  });
});
