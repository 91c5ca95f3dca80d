/**
 * A run killed with SIGKILL while its final answer is being validated (its stop validators run):
 * the resumed run validates the same answer again — no model turn is redone, the answer is the one
 * the dead process had — and completes once.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Runs the checker until its validator runs, kills it; `lagging`: the status run_status.json is left saying. */
async function killDuringValidation(proj: ProjectFixture, lagging?: string): Promise<{ runId: string; root: string }> {
  proj.write('checker.turns.json', JSON.stringify([{ text: 'the answer is 42' }]));
  proj.write('.runtrail/plugins/checks.mjs', CHECKER(proj.dir));
  const first = runtrail(proj.dir, ['run', 'checker', '--data-dir', 'data'], children);
  // the validator waits for its release: killed once it runs and the status file says so (the
  // file is written in the background, a moment after the state changed)
  const statusNow = (): string | null => {
    try {
      const runId = readdirSync(join(proj.dir, 'data', 'runs'))[0];
      return JSON.parse(readFileSync(join(proj.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8')).status;
    } catch {
      return null;
    }
  };
  expect(await eventually(() => validations(proj) === 1 && statusNow() === 'validating', 30_000), first.out()).toBe(true);
  await killHard(first.child);
  const runId = readdirSync(join(proj.dir, 'data', 'runs'))[0];
  const root = join(proj.dir, 'data', 'runs', runId);
  const statusFile = join(root, 'runtime', 'run_status.json');
  expect(JSON.parse(readFileSync(statusFile, 'utf8')).status).toBe('validating');
  if (lagging) writeFileSync(statusFile, JSON.stringify({ ...JSON.parse(readFileSync(statusFile, 'utf8')), status: lagging }));
  return { runId, root };
}

function validations(proj: ProjectFixture): number {
  const log = join(proj.dir, 'validations.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}

describe.runIf(existsSync(MAIN))('a run killed during its final validation', () => {
  it('validates the same answer again on resume, redoes no model turn, and completes once', async () => {
    p = makeProject({});
    const { runId, root } = await killDuringValidation(p);

    p.write('release', '');
    const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    const status = JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status, again.out()).toBe('completed');
    expect(status.final_answer).toBe('the answer is 42');
    expect(validations(p)).toBe(2);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    // one model turn in all: the answer was checkpointed, only its validation is redone
    expect(events.filter((e) => e.stream === 'model' && e.data.phase === 'start')).toHaveLength(1);
    expect(events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed')).toHaveLength(1);
    const metrics = JSON.parse(readFileSync(join(root, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.resumes).toBe(1);
    expect(metrics.lost_to_resumes?.turns ?? 0).toBe(0);
  }, 120_000);

  it('with its status on disk lagging behind (it says planning): the answer is validated again and the run completes', async () => {
    p = makeProject({});
    const { runId, root } = await killDuringValidation(p, 'planning');

    p.write('release', '');
    const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    const status = JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8'));
    expect(status.status, again.out()).toBe('completed');
    expect(status.final_answer).toBe('the answer is 42');
    expect(validations(p)).toBe(2);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    const resumed = events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    const firstMove = events.find((e) => e.seq > resumed!.seq && e.stream === 'run' && e.data.type === 'run.state');
    expect(firstMove?.data).toMatchObject({ from: 'planning', to: 'validating' });
  }, 120_000);
});
