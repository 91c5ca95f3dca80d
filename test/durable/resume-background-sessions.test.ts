/**
 * Background `exec` sessions die with the process that ran the run (or are ended by the next
 * Runtrail): when the run is resumed, the model is told which sessions ended and what each printed
 * last — bounded, with credentials masked on the disk and in what the model reads.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SECRET_MASK } from '../../src/events/secret-masker.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, killHard, MAIN, runEvents, runtrail, type DurableProject } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

// a GitHub token's documented shape: masked wherever text is kept (the command builds it, so that
// only the session's output holds it whole)
const TOKEN = `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`;
const MARK = `ready-${process.pid}-4711`;

/** The files under `dir` that hold `text`. */
function filesWith(dir: string, text: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && readFileSync(join(e.parentPath, e.name), 'utf8').includes(text))
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** Every string inside a JSON value. */
function stringsIn(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (v && typeof v === 'object') return Object.values(v).flatMap(stringsIn);
  return [];
}

describe.runIf(existsSync(MAIN))('background sessions of a run killed with SIGKILL', () => {
  it('the resumed model is told which ended and what they printed last, credentials masked', async () => {
    p = durableProject(
      [
        {
          toolCalls: [
            {
              name: 'exec',
              args: {
                command: `i=0; while [ $i -lt 400 ]; do echo "line $i of warming up"; i=$((i+1)); done; echo "${MARK} token ghp_$(printf 'a1B2c3D4e5%.0s' 1 2 3)abcdef"; sleep 600`,
                background: true,
              },
            },
          ],
        },
        { toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] },
        { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nserver was up\n' } }] },
        { text: 'report written' },
      ],
      { tools: '[send, lookup, write_artifact, exec, process]', config: { sandbox: { mode: 'off' } } },
    );
    const first = runtrail(p.dir, ['run', 'worker', '--data-dir', 'data'], children);
    const runDir = () => join(p!.dir, 'data', 'runs', readdirSync(join(p!.dir, 'data', 'runs'))[0]);
    const outputDir = () => join(runDir(), 'runtime', 'session_output');
    const printed = () => existsSync(outputDir()) && readdirSync(outputDir()).some((n) => readFileSync(join(outputDir(), n), 'utf8').includes(MARK));
    expect(await eventually(() => p!.effects().includes('start lookup:q') && printed(), 30_000), first.out()).toBe(true);
    await killHard(first.child);
    const root = runDir();
    const runId = root.split('/').at(-1)!;
    // on the disk the credential is masked already
    expect(filesWith(outputDir(), TOKEN)).toEqual([]);

    p.release();
    const again = runtrail(p.dir, ['resume', runId, '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    const resumed = events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect((resumed?.data as { diagnosis: { detail: string } }).diagnosis.detail).toMatch(/ended \d leftover processes \(i=0; while/);
    // what the model was sent on its first turn after the resume: the notice with the session's last output
    const calls = readFileSync(join(root, 'runtime', 'model_calls.jsonl'), 'utf8');
    const notice =
      calls
        .split('\n')
        .filter(Boolean)
        .flatMap((l) => stringsIn(JSON.parse(l)))
        .find((t) => t.startsWith("[notice] The run's process stopped")) ?? '';
    expect(notice).toContain('Their last output');
    expect(notice).toContain(`${MARK} token ${SECRET_MASK}`);
    expect(notice).not.toContain(TOKEN);
    expect(notice).toContain('line 399 of warming up');
    // bounded: the start of a long output is not all repeated to the model
    expect(notice).not.toContain('line 0 of warming up');
    expect(notice.length).toBeLessThan(4_000);
    // told once, and nowhere in the run's files in the clear
    expect(existsSync(outputDir())).toBe(false);
    expect(filesWith(root, TOKEN)).toEqual([]);
  }, 120_000);
});
