/** `runtrail show <run_id> --calls`: each model call readable (what it added, what came back), `--json` whole, bad options named. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { CliDeps } from '../../src/cli/cli-io.js';
import type { ModelCall } from '../../src/runtime/model-calls/model-call-record.js';
import { goodTurns, notesPlugin } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, type TestEnv } from '../runtime/fixtures/setup.js';
import { Sink } from './sink.js';

let env: TestEnv;
beforeEach(() => {
  env = makeEnv();
});
afterEach(() => env.cleanup());

function deps(plugins = [notesPlugin()]) {
  const stdout = new Sink();
  const stderr = new Sink();
  const d: CliDeps = {
    agents: plugins,
    stdout,
    stderr,
    env: { RUNTRAIL_DATA_DIR: env.dataDir },
    cwd: env.dir,
    skillsDir: env.skillsDir,
    providerResolver: () => new FakeProvider(goodTurns()),
  };
  return { d, stdout, stderr };
}

async function aRun(plugins = [notesPlugin()]): Promise<string> {
  const { d, stderr } = deps(plugins);
  expect(await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`, '--json'], d)).toBe(0);
  return /run (run_\S+) completed/.exec(stderr.text)![1];
}

describe('runtrail show --calls', () => {
  it('prints each call: figures, what the request added since the call before, the answer and the tool calls', async () => {
    const runId = await aRun();
    const { d, stdout } = deps();
    expect(await runCli(['show', runId, '--calls'], d)).toBe(0);
    const blocks = stdout.text.trim().split('\n\n');
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toMatch(/^── call 1 · turn 1 · fake:fake-1 · \d+ ms \(first token \d+ ms\) · 10 in \/ 5 out · tool-calls/);
    expect(blocks[0]).toContain('request: 1 message(s) · 4 tools (tools-');
    expect(blocks[0]).toMatch(/system: You are/);
    expect(blocks[0]).toContain('   + user: Count the notes.');
    expect(blocks[0]).toContain('   answer: Reading.');
    expect(blocks[0]).toContain('   → read_notes {} [call_0_0]');
    // the second call shares the first message with call 1 and shows only what was added
    expect(blocks[1]).toContain('request: 3 message(s), the first 1 as in call 1');
    expect(blocks[1]).not.toContain('system:');
    expect(blocks[1]).toContain('   + assistant: Reading.');
    expect(blocks[1]).toContain('       → read_notes {} [call_0_0]');
    expect(blocks[1]).toContain('   + tool: ← read_notes [call_0_0]: one two three');
    expect(blocks[2]).toMatch(/turn 3 .* stop/);
    expect(blocks[2]).toContain('   answer: Done: 3 notes.');
  });

  it('--json: one whole call a line, with its tools; --turn narrows to one turn', async () => {
    const runId = await aRun();
    const { d, stdout } = deps();
    expect(await runCli(['show', runId, '--calls', '--json'], d)).toBe(0);
    const calls = stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ModelCall & { tools: Array<{ name: string }> });
    expect(calls.map((c) => c.span_id)).toEqual(['model:1.0', 'model:2.0', 'model:3.0']);
    expect(calls[2].request.messages).toHaveLength(6);
    expect(calls[0].tools.map((t) => t.name)).toEqual(['read_notes', 'write_json', 'write_md', 'sleep']);
    const one = deps();
    expect(await runCli(['show', runId, '--calls', '--turn', '2'], one.d)).toBe(0);
    expect(one.stdout.text).toMatch(/^── call 2 · turn 2 /);
    expect(one.stdout.text).not.toMatch(/^── call [13] /m);
    // a turn the run never reached: the run's turns said, exit 2
    const past = deps();
    expect(await runCli(['show', runId, '--calls', '--turn', '99'], past.d)).toBe(2);
    expect(past.stderr.text).toContain(`--turn 99: run ${runId} has 3 turns with recorded model calls (1..3)`);
    expect(past.stdout.text).toBe('');
  });

  it('says when capture was off, and names a bad option', async () => {
    const runId = await aRun([{ ...notesPlugin(), capture: { model_io: false } }]);
    const { d, stdout } = deps([{ ...notesPlugin(), capture: { model_io: false } }]);
    expect(await runCli(['show', runId, '--calls'], d)).toBe(0);
    expect(stdout.text).toBe('model calls were not recorded for this run: capture.model_io was false (config.json or the agent)\n');
    const bad = deps();
    expect(await runCli(['show', runId, '--calls', '--turn', 'two'], bad.d)).toBe(2);
    expect(bad.stderr.text).toContain('--turn must be a number ≥ 1, got "two"');
    const alone = deps();
    expect(await runCli(['show', runId, '--turn', '1'], alone.d)).toBe(2);
    expect(alone.stderr.text).toContain('--turn goes with --calls');
  });
});
