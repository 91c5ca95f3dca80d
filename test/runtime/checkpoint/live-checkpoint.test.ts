/** A live run writes its checkpoint as it goes: the conversation, the counters, the tool-call journal. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExtensionRegistry } from '../../../src/extensions/extension-registry.js';
import { readCheckpointFile } from '../../../src/runtime/checkpoint/checkpoint-log.js';
import type { CheckpointRecord } from '../../../src/runtime/checkpoint/checkpoint-records.js';
import { RUN_FILES } from '../../../src/runtime/storage/run-files.js';
import { loadCheckpoint } from '../../../src/runtime/checkpoint/resume-point.js';
import { RunService } from '../../../src/runtime/service/run-service.js';
import { agentFile, makeProject, type ProjectFixture } from '../../extensions/project-fixture.js';

let p: ProjectFixture;
let service: RunService;
afterEach(async () => {
  await service?.close();
  p?.cleanup();
});

async function run(frontmatter: string, turns: unknown[]) {
  p = makeProject({
    '.runtrail/agents/writer.md': agentFile(`name: writer\ndescription: writes\nmodel: script:writer.turns.json${frontmatter}`),
    '.runtrail/agents/writer.turns.json': JSON.stringify(turns),
  });
  const registry = await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none') });
  expect(registry.problems).toEqual([]);
  service = new RunService({ dataDir: join(p.dir, '.runtrail'), agentSource: registry, env: {}, cwd: p.dir, processRegistry: null });
  const created = await service.create({ plugin: 'writer', input: {} });
  const final = await service.wait(created.run_id);
  return { final, root: join(service.runsDir, created.run_id) };
}

describe('live checkpoint', () => {
  it('after the run its checkpoint holds the conversation the model saw, each call started before it finished', async () => {
    const { final, root } = await run('', [
      {
        text: 'writing',
        toolCalls: [
          { name: 'write_artifact', args: { path: 'a.md', content: '# a\n' } },
          { name: 'write_artifact', args: { path: 'b.md', content: '# b\n' } },
        ],
      },
      { text: 'done: a and b' },
    ]);
    expect(final.status).toBe('completed');
    const loaded = loadCheckpoint(join(root, RUN_FILES.checkpoint));
    expect(loaded.ok && loaded.point !== null).toBe(true);
    if (!loaded.ok || !loaded.point) return;
    const pt = loaded.point;
    expect(pt.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(pt.messages.at(-1)).toEqual({ role: 'assistant', content: 'done: a and b' });
    expect(pt.system).toBe(readFileSync(join(root, 'runtime', 'system_prompt.md'), 'utf8'));
    expect(pt.loop.toolCalls).toBe(2);
    expect(pt.metrics.iterations).toBe(2);
    expect(pt.turns).toHaveLength(2);
    expect(pt.provider).toEqual({ next: 2, callIds: 2 });
    expect(pt.seq).toBeLessThanOrEqual(final.last_seq);
    expect(pt.plan?.todos.length ?? 0).toBeGreaterThanOrEqual(0);
    // the journal: started (with args) before finished (with result), for each call, in order
    const read = readCheckpointFile<CheckpointRecord>(join(root, RUN_FILES.checkpoint));
    const calls = read.ok ? read.records.flatMap((r) => (r.k === 'call' ? [`${r.phase}:${r.id}`] : [])) : [];
    const ids = (pt.messages[1] as { toolCalls: Array<{ id: string }> }).toolCalls.map((c) => c.id);
    expect(calls).toEqual(ids.flatMap((id) => [`started:${id}`, `finished:${id}`]));
    expect(pt.calls.get(ids[0])).toMatchObject({ name: 'write_artifact', args: { path: 'a.md' }, result: { ok: true } });
  });

  it('an agent that says durability: interrupt keeps no checkpoint', async () => {
    const { final, root } = await run('\ndurability: interrupt', [{ text: 'done' }]);
    expect(final.status).toBe('completed');
    expect(readCheckpointFile(join(root, RUN_FILES.checkpoint))).toEqual({ ok: true, records: [], tornTail: false });
  });
});
