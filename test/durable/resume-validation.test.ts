/**
 * A run killed with SIGKILL while its final answer is being validated (its stop validators run):
 * the resumed run validates the same answer again — no model turn is redone, the answer is the one
 * the dead process had — and completes once.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, killHard, MAIN, runEvents, runtrail } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: ProjectFixture | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

/** An agent whose stop validator notes each time it runs and waits until the test creates <project>/release. */
const CHECKER = (dir: string) => `import { appendFileSync, existsSync } from 'node:fs';
const log = ${JSON.stringify(join(dir, 'validations.log'))};
const release = ${JSON.stringify(join(dir, 'release'))};
export default {
  name: 'checks',
  agents: [
    {
      name: 'checker',
      description: 'answers, then has its answer checked slowly',
      inputSchema: { type: 'object', properties: {} },
      model: ${JSON.stringify(`script:${join(dir, 'checker.turns.json')}`)},
      createTools: () => [],
      validators: [
        {
          name: 'slow-check',
          async validate() {
            appendFileSync(log, 'validate\\n');
            await new Promise((r) => {
              const tick = () => (existsSync(release) ? r() : setTimeout(tick, 20));
              tick();
            });
            return [];
          },
        },
      ],
    },
  ],
};
`;

describe.runIf(existsSync(MAIN))('a run killed during its final validation', () => {
  it('validates the same answer again on resume, redoes no model turn, and completes once', async () => {
    p = makeProject({});
    p.write('checker.turns.json', JSON.stringify([{ text: 'the answer is 42' }]));
    p.write('.runtrail/plugins/checks.mjs', CHECKER(p.dir));
    const validations = () =>
      existsSync(join(p!.dir, 'validations.log')) ? readFileSync(join(p!.dir, 'validations.log'), 'utf8').split('\n').filter(Boolean).length : 0;
    const first = runtrail(p.dir, ['run', 'checker', '--data-dir', 'data'], children);
    expect(await eventually(() => validations() === 1, 30_000), first.out()).toBe(true);
    await killHard(first.child);
    const runId = readdirSync(join(p.dir, 'data', 'runs'))[0];
    const root = join(p.dir, 'data', 'runs', runId);
    expect(JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8')).status).toBe('validating');

    p.write('release', '');
    const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    const status = JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status, again.out()).toBe('completed');
    expect(status.final_answer).toBe('the answer is 42');
    expect(validations()).toBe(2);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    // one model turn in all: the answer was checkpointed, only its validation is redone
    expect(events.filter((e) => e.stream === 'model' && e.data.phase === 'start')).toHaveLength(1);
    expect(events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed')).toHaveLength(1);
    const metrics = JSON.parse(readFileSync(join(root, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.resumes).toBe(1);
    expect(metrics.lost_to_resumes?.turns ?? 0).toBe(0);
  }, 120_000);
});
