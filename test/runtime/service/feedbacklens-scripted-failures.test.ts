/**
 * feedbacklens failure paths end to end: the real RunService, the real builtin plugins
 * and skills, a small CSV, and the real script model replaying turns. The tool arguments are the
 * ones the offline model used on the same CSV (read from its events.jsonl), mutated per scenario.
 * Each case checks what a user relies on: the final status and diagnosis, the error result the
 * model saw naming the problem, the run events, and the files a failed run still leaves.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { builtinPlugins } from '../../../src/plugins/builtin-plugins.js';
import type { ChatMessage, ModelProvider, ModelRequest } from '../../../src/providers/model-provider.js';
import type { ModelTurn } from '../../../src/providers/model-turn.js';
import { createScriptProvider } from '../../../src/providers/script-provider.js';
import { parseEventLines } from '../../../src/runtime/storage/event-store.js';
import type { RunHooks } from '../../../src/runtime/run-hooks.js';
import { RunService } from '../../../src/runtime/service/run-service.js';
import type { RunStatusFile } from '../../../src/runtime/run-service-types.js';
import { SMALL_FEEDBACK_CSV } from '../../fixtures/small-feedback-csv.js';

const ARTIFACTS = ['feedback_analysis.json', 'product_backlog.json', 'insight_report.md'];

type Call = { name: string; args: Record<string, unknown> };
interface Captured {
  read: Call;
  analysis: Call;
  backlog: Call;
  report: Call;
}

let dir: string;
let csvPath: string;
let svc: RunService;
let calls: Captured;
let scriptN = 0;
const services: RunService[] = [];

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function runDir(runId: string): string {
  return join(dir, 'data', 'runs', runId);
}

function eventsOf(runId: string): AgentEvent[] {
  return parseEventLines(readFileSync(join(runDir(runId), 'runtime', 'events.jsonl'), 'utf8'));
}

type ToolResultData = { phase: 'result'; name: string; isError: boolean; result: string; diagnosis?: { code: string } };

function toolResults(runId: string): ToolResultData[] {
  return eventsOf(runId)
    .filter((e) => e.stream === 'tool' && e.data.phase === 'result')
    .map((e) => e.data as ToolResultData);
}

/** The tool result the model saw: plugin tools answer JSON `{ ok, error, detail?, hint?, issues? }`. */
function resultBody(r: ToolResultData): { ok: boolean; error: string; detail?: string; issues?: string[] } {
  return JSON.parse(r.result) as { ok: boolean; error: string; detail?: string; issues?: string[] };
}

function runEvents<T extends string>(runId: string, type: T): Array<Record<string, unknown> & { type: T }> {
  return eventsOf(runId)
    .filter((e) => e.stream === 'run' && (e.data as { type?: string }).type === type)
    .map((e) => e.data as unknown as Record<string, unknown> & { type: T });
}

function artifactsOn(runId: string): string[] {
  return readdirSync(join(runDir(runId), 'artifacts')).sort();
}

/** The files every run leaves, whatever its outcome, and their agreement with the returned status. */
function expectRunFiles(st: RunStatusFile): void {
  const root = runDir(st.run_id);
  for (const f of ['runtime/run_status.json', 'runtime/metrics.json', 'runtime/events.jsonl', 'manifest.json', 'input/request.json']) {
    expect(existsSync(join(root, f)), f).toBe(true);
  }
  const onDisk = JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8')) as RunStatusFile;
  expect(onDisk.status).toBe(st.status);
  expect(onDisk.diagnosis?.code ?? null).toBe(st.diagnosis?.code ?? null);
  const metrics = JSON.parse(readFileSync(join(root, 'runtime', 'metrics.json'), 'utf8')) as { status: string };
  expect(metrics.status).toBe(st.status);
  const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { status: string; documents: Array<{ path: string }> };
  expect(manifest.status).toBe(st.status);
  // the manifest lists exactly the artifacts on disk, also for a failed run
  expect(manifest.documents.map((d) => d.path).sort()).toEqual(artifactsOn(st.run_id).map((a) => `artifacts/${a}`));
  // the terminal event is the last line
  const last = eventsOf(st.run_id).at(-1)!;
  expect(last.stream).toBe('run');
  expect((last.data as { type: string }).type).toBe(`run.${st.status}`);
}

function writeScript(turns: ModelTurn[]): string {
  const file = join(dir, `script-${++scriptN}.json`);
  writeFileSync(file, JSON.stringify(turns, null, 2));
  return file;
}

/** One run driven by `model: 'script:<file>'`, as a user of the CLI or API would ask for it. */
async function runScript(turns: ModelTurn[], opts: { service?: RunService; limits?: Record<string, number> } = {}): Promise<RunStatusFile> {
  const s = opts.service ?? svc;
  const created = await s.create({
    plugin: 'feedbacklens',
    input: { csv_path: csvPath },
    model: `script:${writeScript(turns)}`,
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
  expect(created.provider).toBe('script');
  return s.wait(created.run_id);
}

const turn = (...toolCalls: Call[]): ModelTurn => ({ text: '', toolCalls });
const FINAL: ModelTurn = { text: 'Done: the analysis, backlog and report are in artifacts/.' };

function happyTurns(): ModelTurn[] {
  return [turn(calls.read), turn(calls.analysis), turn(calls.backlog), turn(calls.report), FINAL];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-flfail-'));
  csvPath = join(dir, 'feedback.csv');
  writeFileSync(csvPath, `${SMALL_FEEDBACK_CSV}\n`);
  svc = new RunService({ dataDir: join(dir, 'data'), agents: builtinPlugins(), inputRoots: 'any', env: {}, cwd: dir });
  services.push(svc);

  // one offline run on the same CSV gives realistic arguments for every tool
  const created = await svc.create({ plugin: 'feedbacklens', input: { csv_path: csvPath } });
  const st = await svc.wait(created.run_id);
  expect(st.status).toBe('completed');
  const starts = eventsOf(st.run_id)
    .filter((e) => e.stream === 'tool' && e.data.phase === 'start')
    .map((e) => {
      const d = e.data as { name: string; args: Record<string, unknown> };
      return { name: d.name, args: d.args };
    });
  const find = (name: string, path?: string): Call => {
    const c = starts.find((x) => x.name === name && (path === undefined || x.args.path === path));
    if (!c) throw new Error(`the offline run made no ${name} ${path ?? ''} call`);
    return clone(c);
  };
  calls = {
    read: find('read_feedback_csv'),
    analysis: find('write_json_artifact', 'feedback_analysis.json'),
    backlog: find('write_json_artifact', 'product_backlog.json'),
    report: find('write_markdown_artifact', 'insight_report.md'),
  };
});

afterAll(async () => {
  for (const s of services) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('feedbacklens scripted runs: the baseline', () => {
  it('the offline arguments replayed by the script model complete the run', async () => {
    const st = await runScript(happyTurns());
    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(st.final_answer).toBe(FINAL.text);
    expect(artifactsOn(st.run_id)).toEqual([...ARTIFACTS].sort());
    expectRunFiles(st);
  });
});

describe('feedbacklens scripted failure paths', () => {
  it('an invented feedback_id is refused by the write tool, naming the id; giving up fails the run on the missing artifact', async () => {
    const bad = clone(calls.analysis);
    const content = bad.args.content as { themes: Array<{ evidence: Array<{ feedback_id: string }> }> };
    content.themes[0].evidence[0].feedback_id = 'f999';
    const st = await runScript([turn(calls.read), turn(bad), { text: 'I could not write the analysis.' }]);

    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('validation_failed');
    expect(st.diagnosis?.detail).toContain('required artifact feedback_analysis.json was not created');

    const write = toolResults(st.run_id).find((r) => r.name === 'write_json_artifact')!;
    expect(write.isError).toBe(true);
    expect(write.diagnosis?.code).toBe('artifact_rejected');
    const body = resultBody(write);
    expect(body.error).toBe('feedback_analysis.json rejected: 1 problem(s); nothing was written');
    expect(body.issues).toEqual(['feedback_analysis.json: themes[0].evidence[0].feedback_id: "f999" is not in the evidence index']);

    const blocked = runEvents(st.run_id, 'hook.blocked');
    expect(blocked.map((b) => b.hook)).toContain('RequiredOutput');
    expect(blocked.find((b) => b.hook === 'RequiredOutput')!.reasons).toContain('required artifact feedback_analysis.json was not created');
    const rejected = runEvents(st.run_id, 'artifact.rejected');
    expect(rejected.map((r) => r.path)).toContain('feedback_analysis.json');

    expect(artifactsOn(st.run_id)).toEqual([]);
    expectRunFiles(st);
  });

  it('an invented feedback_id written before the CSV was read is caught by the stop validator', async () => {
    // without an evidence index the write tool cannot check ids; the stop check must
    const bad = clone(calls.analysis);
    const content = bad.args.content as { themes: Array<{ feedback_ids: string[] }> };
    content.themes[0].feedback_ids.push('f404');
    const st = await runScript([turn(bad), turn(calls.read), turn(calls.backlog), turn(calls.report), FINAL]);

    expect(toolResults(st.run_id).every((r) => !r.isError)).toBe(true);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('validation_failed');
    expect(st.diagnosis?.detail).toContain('"f404" is not in the evidence index');
    const blocked = runEvents(st.run_id, 'hook.blocked').find((b) => b.hook === 'FeedbackIdsExist');
    expect(blocked?.reasons).toEqual([expect.stringContaining('themes[0].feedback_ids')]);
    const rejected = runEvents(st.run_id, 'artifact.rejected').find((r) => r.path === 'feedback_analysis.json');
    expect(rejected?.reasons).toEqual([expect.stringContaining('"f404"')]);
    // the failed run keeps what it wrote
    expect(artifactsOn(st.run_id)).toEqual([...ARTIFACTS].sort());
    expectRunFiles(st);
  });

  it('evidence_text that is not in the cited row is refused naming the quote and the row; the other artifacts are kept', async () => {
    const bad = clone(calls.backlog);
    const items = (bad.args.content as { items: Array<{ evidence: Array<{ feedback_id: string; evidence_text: string }> }> }).items;
    const quoted = items[0].evidence[0];
    quoted.evidence_text = 'Uploads always fail instantly and I lost all my work.';
    const st = await runScript([turn(calls.read), turn(calls.analysis), turn(bad), turn(calls.report), { text: 'The backlog could not be written.' }]);

    const write = toolResults(st.run_id).filter((r) => r.name === 'write_json_artifact');
    expect(write.map((r) => r.isError)).toEqual([false, true]);
    expect(write[1].diagnosis?.code).toBe('artifact_rejected');
    const body = resultBody(write[1]);
    expect(body.error).toContain('nothing was written');
    expect(body.issues).toEqual([
      `product_backlog.json: items[0].evidence[0].evidence_text: "Uploads always fail instantly and I lost all my work." is not a verbatim part of feedback "${quoted.feedback_id}"`,
    ]);

    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('validation_failed');
    expect(runEvents(st.run_id, 'hook.blocked').find((b) => b.hook === 'RequiredOutput')?.reasons).toEqual([
      'required artifact product_backlog.json was not created',
    ]);
    expect(runEvents(st.run_id, 'artifact.rejected').map((r) => r.path)).toEqual(['product_backlog.json']);
    expect(artifactsOn(st.run_id)).toEqual(['feedback_analysis.json', 'insight_report.md']);
    expectRunFiles(st);
  });

  it('a required artifact never written (insight_report.md) fails the run; the other two artifacts are kept', async () => {
    const st = await runScript([turn(calls.read), turn(calls.analysis), turn(calls.backlog), { text: 'Analysis and backlog are done.' }]);

    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('validation_failed');
    expect(st.diagnosis?.detail).toContain('required artifact insight_report.md was not created');
    expect(st.final_answer).toBe('Analysis and backlog are done.');

    const blocked = runEvents(st.run_id, 'hook.blocked');
    expect(blocked.find((b) => b.hook === 'RequiredOutput')?.reasons).toEqual(['required artifact insight_report.md was not created']);
    expect(blocked.find((b) => b.hook === 'PlanProgress')?.reasons).toEqual([expect.stringContaining('artifacts missing: insight_report.md')]);
    expect(runEvents(st.run_id, 'artifact.rejected')).toEqual([
      { type: 'artifact.rejected', path: 'insight_report.md', reasons: ['required artifact insight_report.md was not created'] },
    ]);

    expect(artifactsOn(st.run_id)).toEqual(['feedback_analysis.json', 'product_backlog.json']);
    expect(st.public_documents.map((d) => d.path).sort()).toEqual(['artifacts/feedback_analysis.json', 'artifacts/product_backlog.json']);
    const todo = JSON.parse(readFileSync(join(runDir(st.run_id), 'runtime', 'todo_state.json'), 'utf8')) as { todos: Array<{ id: string; status: string }> };
    expect(todo.todos.find((t) => t.id === 'report')?.status).toBe('failed');
    expectRunFiles(st);
  });

  it('bad arguments and invalid JSON come back as error results; corrected calls then complete the run', async () => {
    const st = await runScript([
      turn({ name: 'read_feedback_csv', args: { limit: 100_000, offset: 'start' } }),
      turn(calls.read),
      turn({ name: 'write_json_artifact', args: { path: 'feedback_analysis.json' } }),
      turn({ name: 'write_json_artifact', args: { path: 'feedback_analysis.json', content: '{"product_name": "TaskFlow", ' } }),
      turn(calls.analysis),
      turn(calls.backlog),
      turn(calls.report),
      FINAL,
    ]);

    const results = toolResults(st.run_id);
    expect(results.map((r) => [r.name, r.isError])).toEqual([
      ['read_feedback_csv', true],
      ['read_feedback_csv', false],
      ['write_json_artifact', true],
      ['write_json_artifact', true],
      ['write_json_artifact', false],
      ['write_json_artifact', false],
      ['write_markdown_artifact', false],
    ]);
    expect(results[0].diagnosis?.code).toBe('invalid_args');
    expect(results[0].result).toContain('invalid arguments for read_feedback_csv');
    expect(results[0].result).toContain('limit');
    expect(results[0].result).toContain('offset');
    expect(results[2].diagnosis?.code).toBe('invalid_args');
    expect(results[2].result).toContain('content');
    expect(results[3].diagnosis?.code).toBe('invalid_json');
    expect(results[3].result).toContain('feedback_analysis.json: content is not valid JSON');

    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(runEvents(st.run_id, 'hook.blocked')).toEqual([]);
    expect(artifactsOn(st.run_id)).toEqual([...ARTIFACTS].sort());
    const metrics = JSON.parse(readFileSync(join(runDir(st.run_id), 'runtime', 'metrics.json'), 'utf8'));
    expect(JSON.stringify(metrics)).toContain('write_json_artifact');
    expectRunFiles(st);
  });

  it('writes outside artifacts/ are refused naming the path and write nothing; the run continues', async () => {
    const outside = join(dir, 'escaped.md');
    const md = '# x\n\nhello\n';
    const st = await runScript([
      turn(calls.read),
      turn({ name: 'write_markdown_artifact', args: { path: '../runtime/x.md', content: md } }),
      turn({ name: 'write_markdown_artifact', args: { path: outside, content: md } }),
      turn({ name: 'write_json_artifact', args: { path: 'artifacts/../../../escaped.json', content: { a: 1 } } }),
      turn(calls.analysis),
      turn(calls.backlog),
      turn(calls.report),
      FINAL,
    ]);

    const results = toolResults(st.run_id);
    const [rel, abs, json] = results.slice(1, 4);
    for (const r of [rel, abs, json]) {
      expect(r.isError).toBe(true);
      expect(r.diagnosis?.code).toBe('write_refused');
    }
    expect(rel.result).toContain('cannot write ../runtime/x.md');
    expect(rel.result).toContain('outside the write roots');
    expect(abs.result).toContain(`cannot write ${outside}`);
    expect(abs.result).toContain('relative to artifacts/');
    expect(json.result).toContain('cannot write artifacts/../../../escaped.json');

    expect(existsSync(join(runDir(st.run_id), 'runtime', 'x.md'))).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(dir, 'escaped.json'))).toBe(false);
    expect(existsSync(join(dir, 'data', 'escaped.json'))).toBe(false);
    expect(existsSync(join(dir, 'data', 'runs', 'escaped.json'))).toBe(false);

    expect(st.status).toBe('completed');
    expect(artifactsOn(st.run_id)).toEqual([...ARTIFACTS].sort());
    expectRunFiles(st);
  });

  it('a tool the run does not have (exec) is an error result listing the available tools; the run continues', async () => {
    const st = await runScript([
      turn(calls.read),
      turn({ name: 'exec', args: { command: 'cat /etc/passwd' } }),
      turn(calls.analysis),
      turn(calls.backlog),
      turn(calls.report),
      FINAL,
    ]);
    const exec = toolResults(st.run_id).find((r) => r.name === 'exec')!;
    expect(exec.isError).toBe(true);
    expect(exec.diagnosis?.code).toBe('tool_not_found');
    expect(exec.result).toContain('unknown tool "exec"');
    expect(exec.result).toContain('available tools:');
    expect(exec.result).toContain('write_json_artifact');
    expect(st.status).toBe('completed');
    expectRunFiles(st);
  });

  it('a PreToolUse hook that denies a tool gives an error result with its reason; the run continues', async () => {
    const seen: string[] = [];
    const hooks: Partial<RunHooks> = {
      preToolUse: [
        {
          name: 'NoStatsPolicy',
          beforeTool(call) {
            seen.push(call.name);
            return call.name === 'feedback_stats' ? { action: 'deny', reason: 'feedback_stats is disabled by policy' } : undefined;
          },
        },
      ],
    };
    const guarded = new RunService({ dataDir: join(dir, 'data'), agents: builtinPlugins(), inputRoots: 'any', env: {}, cwd: dir, hooks });
    services.push(guarded);
    const st = await runScript(
      [turn(calls.read), turn({ name: 'feedback_stats', args: {} }), turn(calls.analysis), turn(calls.backlog), turn(calls.report), FINAL],
      { service: guarded },
    );
    const stats = toolResults(st.run_id).find((r) => r.name === 'feedback_stats')!;
    expect(stats.isError).toBe(true);
    expect(stats.diagnosis?.code).toBe('hook_denied');
    expect(stats.result).toContain('NoStatsPolicy denied feedback_stats');
    expect(stats.result).toContain('feedback_stats is disabled by policy');
    expect(seen).toEqual(['read_feedback_csv', 'feedback_stats', 'write_json_artifact', 'write_json_artifact', 'write_markdown_artifact']);
    expect(st.status).toBe('completed');
    expectRunFiles(st);
  });

  it('stop_repair_turns: 1 hands the failed checks back to the model, which fixes them and completes', async () => {
    const requests: ChatMessage[][] = [];
    const recording = (): ModelProvider => {
      const inner = createScriptProvider([
        turn(calls.read),
        turn(calls.analysis),
        turn(calls.backlog),
        { text: 'All done (first try).' },
        turn(calls.report),
        FINAL,
      ]);
      return {
        provider: inner.provider,
        model: inner.model,
        stream(req: ModelRequest) {
          requests.push(req.messages.map((m) => ({ ...m })));
          return inner.stream(req);
        },
      };
    };
    const repairing = new RunService({
      dataDir: join(dir, 'data'),
      agents: builtinPlugins(),
      inputRoots: 'any',
      env: {},
      cwd: dir,
      providerResolver: recording,
    });
    services.push(repairing);
    const created = await repairing.create({ plugin: 'feedbacklens', input: { csv_path: csvPath }, limits: { stop_repair_turns: 1 } });
    const st = await repairing.wait(created.run_id);

    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(st.final_answer).toBe(FINAL.text);

    // the first final answer failed validation, visibly
    const blocked = runEvents(st.run_id, 'hook.blocked');
    expect(blocked.find((b) => b.hook === 'RequiredOutput')?.reasons).toEqual(['required artifact insight_report.md was not created']);
    expect(runEvents(st.run_id, 'artifact.rejected').map((r) => r.path)).toEqual(['insight_report.md']);
    expect(runEvents(st.run_id, 'run.state').filter((s) => s.to === 'validating')).toHaveLength(2);

    // the model got the reasons as a user message in its next turn
    expect(requests).toHaveLength(6);
    const repair = requests[4].at(-1)!;
    expect(repair.role).toBe('user');
    expect(repair.content).toContain('Stop validation failed');
    expect(repair.content).toContain('required artifact insight_report.md was not created');
    expect(requests[3].some((m) => m.content.includes('Stop validation failed'))).toBe(false);

    expect(artifactsOn(st.run_id)).toEqual([...ARTIFACTS].sort());
    expectRunFiles(st);
  });

  it('without stop_repair_turns the same script fails at the first final answer and never plays the fix', async () => {
    const st = await runScript([turn(calls.read), turn(calls.analysis), turn(calls.backlog), { text: 'All done (first try).' }, turn(calls.report), FINAL]);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('validation_failed');
    expect(st.final_answer).toBe('All done (first try).');
    expect(toolResults(st.run_id).map((r) => r.name)).not.toContain('write_markdown_artifact');
    expectRunFiles(st);
  });
});
