/** `runtrail run --reasoning / --show-reasoning / --context-tokens` and the usage lines of `runtrail show`. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { CliDeps } from '../../src/cli/cli-io.js';
import type { ModelRequest } from '../../src/providers/model-provider.js';
import { goodTurns, notesPlugin } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider, type FakeTurn } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, type TestEnv } from '../runtime/fixtures/setup.js';
import { Sink } from './sink.js';

let env: TestEnv;
beforeEach(() => {
  env = makeEnv();
});
afterEach(() => env.cleanup());

function deps(turns: FakeTurn[] = goodTurns()) {
  const stdout = new Sink();
  const stderr = new Sink();
  const requests: ModelRequest[] = [];
  const d: CliDeps = {
    agents: [notesPlugin()],
    stdout,
    stderr,
    env: { RUNTRAIL_DATA_DIR: env.dataDir },
    cwd: env.dir,
    skillsDir: env.skillsDir,
    providerResolver: () => {
      const p = new FakeProvider(turns);
      const stream = p.stream.bind(p);
      p.stream = (req) => {
        requests.push(req);
        return stream(req);
      };
      return p;
    },
  };
  return { d, stdout, stderr, requests };
}

const run = ['run', 'notes', '--input', 'notes_path=notes.txt'];

describe('runtrail run: model options', () => {
  it('--reasoning and --context-tokens reach every model turn', async () => {
    const { d, requests } = deps();
    expect(await runCli([...run, '--reasoning', 'medium', '--context-tokens', '64000'], d)).toBe(0);
    expect(requests.map((r) => [r.reasoning, r.contextTokens])).toEqual([
      ['medium', 64000],
      ['medium', 64000],
      ['medium', 64000],
    ]);
  });

  it('reasoning is off unless asked for', async () => {
    const { d, requests } = deps();
    expect(await runCli(run, d)).toBe(0);
    expect(requests[0]!.reasoning).toBe('off');
  });

  it.each([
    [['--reasoning', 'max'], '--reasoning must be one of off, low, medium, high, got "max"'],
    [['--reasoning'], 'argument missing'],
    [['--context-tokens', 'lots'], '--context-tokens must be a number'],
  ])('refuses %j with exit 2 and says what is wrong', async (extra, message) => {
    const { d, stderr } = deps();
    expect(await runCli([...run, ...extra], d)).toBe(2);
    expect(stderr.text).toContain(message);
  });

  it('--show-reasoning prints the model reasoning; without it the reasoning stays out of the output', async () => {
    const turns = (): FakeTurn[] => [{ ...goodTurns()[0]!, reasoning: 'Counting needs the file first.' }, ...goodTurns().slice(1)];
    const shown = deps(turns());
    expect(await runCli([...run, '--show-reasoning'], shown.d)).toBe(0);
    expect(shown.stdout.text).toContain('Counting needs the file first.');
    const hidden = deps(turns());
    expect(await runCli(run, hidden.d)).toBe(0);
    expect(hidden.stdout.text).not.toContain('Counting needs the file first.');
  });
});

describe('runtrail show: tokens and cost', () => {
  it('prints the tokens and says the cost is unknown for a model without a price', async () => {
    const { d, stdout } = deps();
    expect(await runCli(run, d)).toBe(0);
    const runId = /run (run_\S+) completed/.exec(stdout.text)![1]!;
    const shown = deps();
    expect(await runCli(['show', runId], shown.d)).toBe(0);
    expect(shown.stdout.text).toContain('tokens     in 30 (cached 0 = 0% from cache, cache write 0) · out 15 (reasoning 0) · 3 model call(s)');
    expect(shown.stdout.text).toContain('cost       unknown (the model has no price in the catalog)');
    const json = deps();
    expect(await runCli(['show', runId, '--json'], json.d)).toBe(0);
    expect(JSON.parse(json.stdout.text).metrics).toMatchObject({ tokens: { input: 30, output: 15, cached_input: 0 }, cost_usd: null });
  });
});
