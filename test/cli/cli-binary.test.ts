/**
 * The built `runtrail` binary as a user runs it: a real child process
 * (`node dist/src/cli/main.js`) with its own --data-dir, real signals and exit codes.
 * `npm test` builds before vitest; without dist/ these tests are skipped with a message.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { SMALL_FEEDBACK_CSV } from '../fixtures/small-feedback-csv.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
const BUILT = existsSync(MAIN);
const SKIP_REASON = `skipped: ${MAIN} is missing — run \`npm run build\` (or \`npx tsc -p tsconfig.build.json\`) first; \`npm test\` builds before vitest`;
if (!BUILT) console.warn(`cli-binary.test.ts ${SKIP_REASON}`);

interface Proc {
  child: ChildProcess;
  out(): string;
  err(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let dir: string;
let csvPath: string;
const children = new Set<ChildProcess>();

/** The environment of a user's shell, minus any Runtrail settings of the machine running the tests. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) env[k] = v;
  return { ...env, NO_COLOR: '1' };
}

function runtrail(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, out: () => out, err: () => err, exited };
}

async function runToEnd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const p = runtrail(args, env);
  const { code } = await p.exited;
  return { code, out: p.out(), err: p.err() };
}

async function until<T>(what: string, probe: () => T | undefined | null | false, proc: Proc): Promise<T> {
  for (;;) {
    const v = probe();
    if (v) return v;
    if (proc.child.exitCode !== null || proc.child.signalCode !== null)
      throw new Error(`runtrail exited before ${what}\nstdout:\n${proc.out()}\nstderr:\n${proc.err()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

function runIdsIn(dataDir: string): string[] {
  const runs = join(dataDir, 'runs');
  return existsSync(runs) ? readdirSync(runs).filter((n) => n.startsWith('run_')) : [];
}

type Frame = { type: string; seq?: number; trace_id?: string; [k: string]: unknown };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-bin-'));
  csvPath = join(dir, 'feedback.csv');
  writeFileSync(csvPath, `${SMALL_FEEDBACK_CSV}\n`);
});

afterEach(() => {
  // no child outlives its test, whatever the test did
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!BUILT)(`runtrail binary (dist/src/cli/main.js)${BUILT ? '' : ` — ${SKIP_REASON}`}`, () => {
  it('run --json prints NDJSON wire frames ending in done; replay gives the same bytes (ndjson) and parseable SSE', { timeout: 60_000 }, async () => {
    const dataDir = join(dir, 'data-json');
    const run = await runToEnd(['run', 'feedbacklens', '--input', `csv_path=${csvPath}`, '--input', 'product_name=TaskFlow', '--json', '--data-dir', dataDir]);
    expect(run.err).toMatch(/✓ run run_\d{8}_\d{6}_\d{6} completed/);
    expect(run.code).toBe(0);

    const lines = run.out.split('\n');
    expect(lines.pop()).toBe(''); // every frame ends its line
    const frames = lines.map((l) => JSON.parse(l) as Frame);
    expect(frames.length).toBeGreaterThan(5);
    const runId = /run (run_\S+) completed/.exec(run.err)![1];
    // every frame carries the run's trace id (the OpenTelemetry trace id on run_status.json)
    const traceId = readJson<{ trace_id: string }>(join(dataDir, 'runs', runId, 'runtime', 'run_status.json'))!.trace_id;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const f of frames) {
      expect(typeof f.type).toBe('string');
      expect(f.trace_id).toBe(traceId);
      expect(Number.isInteger(f.seq)).toBe(true);
    }
    const seqs = frames.map((f) => f.seq!);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(frames.some((f) => f.type === 'step')).toBe(true);
    const done = frames.at(-1)!;
    expect(done.type).toBe('done');
    expect(frames.filter((f) => f.type === 'done')).toHaveLength(1);

    // the run on disk agrees with what was printed
    const runDir = join(dataDir, 'runs', runId);
    const status = readJson<{ status: string; provider: string; last_seq: number }>(join(runDir, 'runtime', 'run_status.json'))!;
    expect(status).toMatchObject({ status: 'completed', provider: 'offline' });
    for (const a of ['feedback_analysis.json', 'product_backlog.json', 'insight_report.md']) expect(existsSync(join(runDir, 'artifacts', a)), a).toBe(true);
    expect(run.err).toContain(join(runDir, 'artifacts', 'insight_report.md'));

    // replay from events.jsonl in a fresh process: byte for byte
    const replay = await runToEnd(['replay', runId, '--format', 'ndjson', '--data-dir', dataDir]);
    expect(replay.code).toBe(0);
    expect(replay.out).toBe(run.out);

    // SSE replay: a real SSE parser sees one message per frame, with the frame's seq as its id
    const sse = await runToEnd(['replay', runId, '--format', 'sse', '--data-dir', dataDir]);
    expect(sse.code).toBe(0);
    const messages: EventSourceMessage[] = [];
    const parser = createParser({
      onEvent: (m) => messages.push(m),
      onError: (e) => {
        throw e;
      },
    });
    parser.feed(sse.out);
    parser.reset({ consume: true });
    expect(messages).toHaveLength(frames.length);
    const strip = ({ seq: _s, trace_id: _t, ...rest }: Frame) => rest;
    messages.forEach((m, i) => {
      expect(m.id).toBe(String(frames[i].seq));
      expect(strip(JSON.parse(m.data) as Frame)).toEqual(strip(frames[i]));
    });
    expect((JSON.parse(messages.at(-1)!.data) as Frame).type).toBe('done');
  });

  it('bad input exits 2 naming the field; an unknown plugin exits 2 listing the valid plugins; no run is created', { timeout: 60_000 }, async () => {
    const dataDir = join(dir, 'data-bad');
    const bad = await runToEnd(['run', 'feedbacklens', '--input', 'nope=1', '--data-dir', dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('invalid input for feedbacklens');
    expect(bad.err).toContain('nope');
    expect(bad.err).toContain('input.csv_path');

    const missing = await runToEnd(['run', 'feedbacklens', '--input', `csv_path=${join(dir, 'no-such.csv')}`, '--data-dir', dataDir]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('input.csv_path');
    expect(missing.err).toContain('no-such.csv');

    const unknown = await runToEnd(['run', 'nosuchplugin', '--data-dir', dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown plugin "nosuchplugin"');
    const valid = /valid plugins: (.*)/.exec(unknown.err)?.[1] ?? '';
    expect(valid.split(', ')).toEqual(expect.arrayContaining(['feedbacklens', 'file_summary']));

    expect(runIdsIn(dataDir)).toEqual([]);
  });

  it("what the CLI prints shows none of its environment's secrets, even where the user typed one", { timeout: 60_000 }, async () => {
    const secret = 'cli-Secret-9f3a7c1e5b2d4086';
    const r = await runToEnd(['run', `agent-${secret}`, '--data-dir', join(dir, 'data-masked')], { MY_SERVICE_API_KEY: secret });
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown plugin "agent-[redacted]"');
    expect(r.out + r.err).not.toContain(secret);
    expect(r.out + r.err).not.toContain(Buffer.from(secret).toString('base64'));
  });

  it('serve refuses a weak RUNTRAIL_API_TOKEN at start: exit 2, one line saying why and how to make one, the token not shown', {
    timeout: 60_000,
  }, async () => {
    const dataDir = join(dir, 'data-weak-token');
    for (const [token, why] of [
      ['a', 'RUNTRAIL_API_TOKEN is 1 character long; it must be at least 24'],
      [' ', 'RUNTRAIL_API_TOKEN is 1 character long; it must be at least 24'],
      ['letmein-letmein-letmein', 'RUNTRAIL_API_TOKEN is 23 characters long; it must be at least 24'],
    ]) {
      const r = await runToEnd(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dataDir], { RUNTRAIL_API_TOKEN: token });
      expect(r.code, r.err).toBe(2);
      expect(r.out).not.toContain('serving on');
      // said once, on one line, without a stack (other start lines, such as the sandbox's, may come before it)
      const lines = r.err
        .trim()
        .split('\n')
        .filter((l) => l.includes('RUNTRAIL_API_TOKEN'));
      expect(lines, r.err).toHaveLength(1);
      expect(lines[0]).toContain(why);
      expect(lines[0]).toContain('openssl rand -hex 32');
      expect(r.err).not.toMatch(/^\s+at /m);
      if (token.trim().length > 3) expect(r.err).not.toContain(token);
    }
  });

  it('SIGINT during a slow scripted run exits 130 and leaves the run cancelled on disk with its files', { timeout: 60_000 }, async () => {
    const dataDir = join(dir, 'data-sigint');
    mkdirSync(dataDir, { recursive: true });
    const script = join(dir, 'slow-script.json');
    writeFileSync(
      script,
      JSON.stringify([
        { text: 'Reading the feedback first.', toolCalls: [{ name: 'read_feedback_csv', args: { limit: 20 } }] },
        { delayMs: 600_000, text: 'this turn is never reached' },
      ]),
    );
    const p = runtrail(['run', 'feedbacklens', '--input', `csv_path=${csvPath}`, '--model', `script:${script}`, '--json', '--data-dir', dataDir]);

    // wait until the run is inside the slow second model turn
    const runId = await until('the run folder appeared', () => runIdsIn(dataDir)[0], p);
    const runDir = join(dataDir, 'runs', runId);
    await until(
      'the slow model turn started',
      () => {
        const events = existsSync(join(runDir, 'runtime', 'events.jsonl')) ? readFileSync(join(runDir, 'runtime', 'events.jsonl'), 'utf8') : '';
        const toolDone = events.includes('"phase":"result"');
        // a printed frame also means the Ctrl-C handler is in place (it is registered before streaming)
        return toolDone && p.out() !== '' && readJson<{ status: string }>(join(runDir, 'runtime', 'run_status.json'))?.status === 'model_thinking';
      },
      p,
    );
    p.child.kill('SIGINT');
    const { code, signal } = await p.exited;
    expect(signal).toBeNull();
    expect(code).toBe(130);
    expect(p.err()).toContain('cancelling');
    expect(p.err()).toMatch(new RegExp(`run ${runId} cancelled`));

    const status = readJson<{ status: string; diagnosis: { code: string } | null }>(join(runDir, 'runtime', 'run_status.json'))!;
    expect(status.status).toBe('cancelled');
    expect(status.diagnosis?.code).toBe('cancelled');
    expect(readJson<{ status: string }>(join(runDir, 'runtime', 'metrics.json'))?.status).toBe('cancelled');
    expect(readJson<{ status: string }>(join(runDir, 'manifest.json'))?.status).toBe('cancelled');
    const events = readFileSync(join(runDir, 'runtime', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(JSON.parse(events.at(-1)!).data.type).toBe('run.cancelled');

    // the printed frames end where the events end, and a replay of the cancelled run matches them
    const replay = await runToEnd(['replay', runId, '--format', 'ndjson', '--data-dir', dataDir]);
    expect(replay.code).toBe(0);
    expect(replay.out).toBe(p.out());
    const show = await runToEnd(['show', runId, '--json', '--data-dir', dataDir]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.out).status.status).toBe('cancelled');
  });
});
