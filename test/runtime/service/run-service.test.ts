import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { RunRequestError } from '../../../src/runtime/run-request-error.js';
import type { RunService } from '../../../src/runtime/service/run-service.js';
import { goodTurns, notesPlugin as notesPluginWith } from '../fixtures/fake-plugin.js';
import { FakeProvider } from '../fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../fixtures/setup.js';

let env: TestEnv;
let svc: RunService | null = null;
beforeEach(() => {
  env = makeEnv();
});
afterEach(async () => {
  await svc?.close();
  svc = null;
  env.cleanup();
});

function runFile(runId: string, rel: string): string {
  return join(env.dataDir, 'runs', runId, rel);
}
function events(runId: string): AgentEvent[] {
  return readFileSync(runFile(runId, 'runtime/events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AgentEvent);
}
function runEvents(runId: string, type: string) {
  return events(runId).filter((e) => e.stream === 'run' && e.data.type === type);
}

describe('RunService: a good run', () => {
  it('a final file that cannot be written is a notice before the terminal event; the run still ends, its other files in place', async () => {
    const turns = goodTurns();
    const provider = new FakeProvider((n) => {
      // the last turn: metrics.json's place is taken by a folder, so its write (tmp + rename) fails
      if (n === turns.length - 1) for (const id of readdirSync(join(env.dataDir, 'runs'))) mkdirSync(runFile(id, 'runtime/metrics.json'), { recursive: true });
      return turns[n];
    });
    svc = makeService(env, provider);
    const created = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count' });
    const done = await svc.wait(created.run_id);
    expect(done.status).toBe('completed');
    const evs = events(created.run_id);
    const notice = evs.findIndex((e) => e.stream === 'run' && e.data.type === 'notice' && String(e.data.text).startsWith('could not finish metrics.json'));
    const terminal = evs.findIndex((e) => e.stream === 'run' && e.data.type === 'run.completed');
    expect(notice).toBeGreaterThan(-1);
    expect(notice).toBeLessThan(terminal);
    expect(JSON.parse(readFileSync(runFile(created.run_id, 'runtime/run_status.json'), 'utf8'))).toMatchObject({
      status: 'completed',
      last_seq: evs[terminal].seq,
    });
    expect(existsSync(runFile(created.run_id, 'manifest.json'))).toBe(true);
    expect(existsSync(runFile(created.run_id, 'runtime/model_turns.jsonl'))).toBe(true);
  });

  it("completes and writes the run folder's whole tree", async () => {
    const provider = new FakeProvider(goodTurns());
    svc = makeService(env, provider);
    const created = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'count' });
    expect(created.run_id).toMatch(/^run_\d{8}_\d{6}_\d{6}$/);
    expect(created.status).toBe('queued');
    const done = await svc.wait(created.run_id);
    expect(done.status).toBe('completed');
    expect(done.final_answer).toBe('Done: 3 notes.');
    for (const f of [
      'input/request.json',
      'input/notes.txt',
      'runtime/skill_activation.json',
      'runtime/resolved_config.json',
      'runtime/system_prompt.md',
      'runtime/agent_plan.json',
      'runtime/todo_state.json',
      'runtime/events.jsonl',
      'runtime/metrics.json',
      'runtime/run_status.json',
      'runtime/trace.jsonl',
      'artifacts/count.json',
      'artifacts/report.md',
      'manifest.json',
    ]) {
      expect(existsSync(runFile(created.run_id, f)), f).toBe(true);
    }
    // tools got the workspace copy, not the user's path
    const req = JSON.parse(readFileSync(runFile(created.run_id, 'input/request.json'), 'utf8'));
    expect(req.input.notes_path).toBe('input/notes.txt');
    const prompt = readFileSync(runFile(created.run_id, 'runtime/system_prompt.md'), 'utf8');
    for (const s of [
      'Business Plugin',
      'Goal',
      'Business Guidance',
      'Run Input',
      'Available Tools',
      'Permission Boundaries',
      'Required Outputs',
      'Skill Instructions',
    ]) {
      expect(prompt).toContain(`## ${s}`);
    }
    expect(prompt).toContain('Read first, then write.');
    expect(provider.requests[0].system).toBe(prompt);
    const todo = JSON.parse(readFileSync(runFile(created.run_id, 'runtime/todo_state.json'), 'utf8'));
    expect(todo.todos.map((t: { status: string }) => t.status)).toEqual(['completed', 'completed']);
  });

  it('numbers events without gaps, walks the documented states and ends with run.completed', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    const evs = events(run_id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(st.last_seq).toBe(evs.length);
    const states = runEvents(run_id, 'run.state').map((e) => (e.data as { to: string }).to);
    expect(states).toEqual([
      'queued',
      'created',
      'planning',
      'model_thinking',
      'tool_executing',
      'model_thinking',
      'tool_executing',
      'model_thinking',
      'validating',
      'completed',
    ]);
    const last = evs[evs.length - 1];
    expect(last.stream === 'run' && last.data.type).toBe('run.completed');
    // the run is a runtime operation channels can follow
    const proc = evs.filter((e) => e.stream === 'process').map((e) => (e.data as { event: { operationId: string; targetType: string; status: string } }).event);
    expect(proc.some((p) => p.operationId === run_id && p.targetType === 'runtime' && p.status === 'completed')).toBe(true);
    // tool start/result pairs
    const tools = evs.filter((e) => e.stream === 'tool');
    expect(tools.filter((e) => (e.data as { phase: string }).phase === 'start')).toHaveLength(3);
    expect(runEvents(run_id, 'plan.updated').length).toBeGreaterThan(0);
  });

  it('writes status, metrics and a manifest that lists only public documents', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    const manifest = JSON.parse(readFileSync(runFile(run_id, 'manifest.json'), 'utf8'));
    expect(manifest.run_id).toBe(run_id);
    expect(manifest.status).toBe('completed');
    expect(manifest.plugin).toEqual({ name: 'notes', version: '1.2.3' });
    expect(manifest.documents.map((d: { path: string }) => d.path).sort()).toEqual(['artifacts/count.json', 'artifacts/report.md']);
    expect(manifest.documents.find((d: { path: string }) => d.path === 'artifacts/report.md')).toMatchObject({
      audience: 'user',
      sensitivity: 'public',
      type: 'markdown',
    });
    expect(st.public_documents).toEqual(manifest.documents);
    const disk = JSON.parse(readFileSync(runFile(run_id, 'runtime/run_status.json'), 'utf8'));
    expect(disk).toEqual(st);
    const m = JSON.parse(readFileSync(runFile(run_id, 'runtime/metrics.json'), 'utf8'));
    expect(m.iterations).toBe(3);
    expect(m.tool_calls.by_name).toEqual({ read_notes: 1, write_json: 1, write_md: 1 });
    expect(m.tokens).toEqual({ input: 30, output: 15, cached_input: 0, cache_write: 0, reasoning: 0 });
    expect(m.cost_usd).toBeNull(); // fake:fake-1 is in no catalog: unknown, never 0
    const turns = readFileSync(runFile(run_id, 'runtime/model_turns.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(turns.map((t) => [t.turn, t.attempt, t.model, t.finish_reason, t.tokens.input, t.cost_usd])).toEqual([
      [1, 0, 'fake:fake-1', 'tool-calls', 10, null],
      [2, 0, 'fake:fake-1', 'tool-calls', 10, null],
      [3, 0, 'fake:fake-1', 'stop', 10, null],
    ]);
    expect(m.model_latency_ms.turns).toBe(3);
    expect(Object.keys(m.stage_durations_ms)).toEqual(expect.arrayContaining(['queued', 'planning', 'model_thinking', 'tool_executing', 'validating']));
    const cfg = readFileSync(runFile(run_id, 'runtime/resolved_config.json'), 'utf8');
    expect(JSON.parse(cfg).capabilities).toMatchObject({
      plugin: { name: 'notes', version: '1.2.3' },
      skill: { name: 'notes_skill', version: '0.1.0' },
      writeRoots: ['artifacts'],
    });
    expect(await svc.documentPath(run_id, 'artifacts/report.md')).toBe(runFile(run_id, 'artifacts/report.md'));
    expect(await svc.documentPath(run_id, 'runtime/events.jsonl')).toBeNull();
    const trace = readFileSync(runFile(run_id, 'runtime/trace.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(trace[0])).toMatchObject({ run_id, event: 'run.created' });
  });
});

describe('RunService: stop validation', () => {
  it('fails a run that misses an artifact with hook.blocked and artifact.rejected, keeping what was made', async () => {
    svc = makeService(
      env,
      new FakeProvider([
        { toolCalls: [{ name: 'read_notes', args: {} }] },
        { toolCalls: [{ name: 'write_json', args: { path: 'count.json', value: { count: 3, title: 'n' } } }] },
        { text: 'finished' },
      ]),
    );
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('validation_failed');
    expect(st.diagnosis?.detail).toContain('report.md');
    expect(runEvents(run_id, 'hook.blocked').map((e) => (e.data as { hook: string }).hook)).toEqual(expect.arrayContaining(['RequiredOutput', 'PlanProgress']));
    expect(runEvents(run_id, 'artifact.rejected').map((e) => (e.data as { path: string }).path)).toContain('report.md');
    expect(existsSync(runFile(run_id, 'artifacts/count.json'))).toBe(true);
    expect(existsSync(runFile(run_id, 'runtime/metrics.json'))).toBe(true);
    expect(JSON.parse(readFileSync(runFile(run_id, 'manifest.json'), 'utf8')).status).toBe('failed');
    expect(events(run_id).at(-1)).toMatchObject({ stream: 'run', data: { type: 'run.failed' } });
  });

  it('rejects invalid JSON, a schema mismatch, a missing heading and a plugin validator failure', async () => {
    svc = makeService(
      env,
      new FakeProvider([
        { toolCalls: [{ name: 'read_notes', args: {} }] },
        {
          toolCalls: [
            { name: 'write_json', args: { path: 'count.json', value: '{not json' } },
            { name: 'write_md', args: { path: 'report.md', text: '# Other\n' } },
          ],
        },
        { text: 'finished' },
      ]),
    );
    const a = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const sa = await svc.wait(a.run_id);
    expect(sa.status).toBe('failed');
    expect(sa.diagnosis?.detail).toMatch(/count\.json is not valid JSON/);
    expect(sa.diagnosis?.detail).toMatch(/lacks the heading "Summary"/);

    const svc2 = makeService(
      env,
      new FakeProvider([
        { toolCalls: [{ name: 'read_notes', args: {} }] },
        {
          toolCalls: [
            { name: 'write_json', args: { path: 'count.json', value: { count: 7, title: 'n' } } },
            { name: 'write_md', args: { path: 'report.md', text: '## Summary\n' } },
          ],
        },
        { text: 'finished' },
      ]),
    );
    const b = await svc2.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const sb = await svc2.wait(b.run_id);
    expect(sb.status).toBe('failed');
    expect(sb.diagnosis?.detail).toContain('count 7 is not the real 3');
    const svc3 = makeService(
      env,
      new FakeProvider([
        { toolCalls: [{ name: 'read_notes', args: {} }] },
        {
          toolCalls: [
            { name: 'write_json', args: { path: 'count.json', value: { count: 'x' } } },
            { name: 'write_md', args: { path: 'report.md', text: '## Summary\n' } },
          ],
        },
        { text: 'finished' },
      ]),
    );
    const c = await svc3.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const sc = await svc3.wait(c.run_id);
    expect(sc.diagnosis?.detail).toMatch(/count\.json: count: /);
    await svc2.close();
    await svc3.close();
  });

  it('stop_repair_turns hands the reasons back to the model, which then fixes the run', async () => {
    const provider = new FakeProvider([
      { toolCalls: [{ name: 'read_notes', args: {} }] },
      { toolCalls: [{ name: 'write_json', args: { path: 'count.json', value: { count: 3, title: 'n' } } }] },
      { text: 'finished' },
      { toolCalls: [{ name: 'write_md', args: { path: 'report.md', text: '## Summary\nok\n' } }] },
      { text: 'fixed' },
    ]);
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, limits: { stop_repair_turns: 1 } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('completed');
    expect(st.final_answer).toBe('fixed');
    const repair = provider.requests[3].messages.at(-1);
    expect(repair).toMatchObject({ role: 'user' });
    expect((repair as { content: string }).content).toContain('report.md');
  });
});

describe('RunService: tool failures come back to the model', () => {
  it('bad args, then recovery', async () => {
    const provider = new FakeProvider([
      { toolCalls: [{ name: 'read_notes', args: {} }] },
      { toolCalls: [{ name: 'write_json', args: { value: 1 } }] },
      ...goodTurns().slice(1),
    ]);
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('completed');
    const toolMsg = provider.requests[2].messages.at(-1) as { role: string; isError: boolean; content: string };
    expect(toolMsg).toMatchObject({ role: 'tool', isError: true });
    expect(toolMsg.content).toContain('invalid arguments for write_json');
    expect(toolMsg.content).toContain('path');
    const fail = events(run_id).find((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.isError);
    expect(fail?.data).toMatchObject({ diagnosis: { code: 'invalid_args' } });
  });

  it('a write outside artifacts/ is refused and the run goes on', async () => {
    const provider = new FakeProvider([
      { toolCalls: [{ name: 'read_notes', args: {} }] },
      { toolCalls: [{ name: 'write_md', args: { path: '../runtime/evil.md', text: 'x' } }] },
      ...goodTurns().slice(1),
    ]);
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    expect(existsSync(runFile(run_id, 'runtime/evil.md'))).toBe(false);
    const msg = provider.requests[2].messages.at(-1) as { content: string; isError: boolean };
    expect(msg.isError).toBe(true);
    expect(msg.content).toMatch(/outside the write roots/);
  });

  it('an unknown tool names the available ones', async () => {
    const provider = new FakeProvider([{ toolCalls: [{ name: 'rm_rf', args: {} }] }, ...goodTurns()]);
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    const msg = provider.requests[1].messages.at(-1) as { content: string };
    expect(msg.content).toContain('unknown tool "rm_rf"');
    expect(msg.content).toContain('read_notes');
  });
});

describe('RunService: limits', () => {
  it('max_iterations', async () => {
    let k = 0;
    svc = makeService(env, new FakeProvider(() => ({ toolCalls: [{ name: 'read_notes', args: { n: k++ } }] })));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, limits: { max_iterations: 4 } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('max_iterations');
    expect(JSON.parse(readFileSync(runFile(run_id, 'runtime/metrics.json'), 'utf8')).iterations).toBe(4);
  });

  it('max_tool_calls', async () => {
    let k = 0;
    svc = makeService(
      env,
      new FakeProvider(() => ({
        toolCalls: [
          { name: 'read_notes', args: { a: k++ } },
          { name: 'read_notes', args: { b: k++ } },
        ],
      })),
    );
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, limits: { max_tool_calls: 5 } });
    const st = await svc.wait(run_id);
    expect(st.diagnosis?.code).toBe('max_tool_calls');
    expect(JSON.parse(readFileSync(runFile(run_id, 'runtime/metrics.json'), 'utf8')).tool_calls.total).toBe(5);
  });

  it('three identical calls in a row stop the run', async () => {
    svc = makeService(env, new FakeProvider(() => ({ toolCalls: [{ name: 'read_notes', args: {} }] })));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.diagnosis?.code).toBe('repeated_tool_call');
  });

  it('identical polling calls (a repeatable tool) do not count as a loop', async () => {
    let polls = 0;
    const poll = {
      name: 'poll_job',
      description: 'poll a job',
      parameters: z.object({ id: z.string() }),
      repeatable: () => true,
      async execute() {
        polls++;
        return { ok: true, content: polls < 4 ? 'running' : 'done' };
      },
    };
    const turns = goodTurns();
    const script = [...Array.from({ length: 4 }, () => ({ toolCalls: [{ name: 'poll_job', args: { id: 'j1' } }] })), ...turns];
    svc = makeService(env, new FakeProvider(script), { agents: [notesPluginWith([poll])] });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.diagnosis).toBeNull();
    expect(st.status).toBe('completed');
    expect(polls).toBe(4);
  });

  it('a reply cut at the output-token limit is continued, and the final answer joins the parts', async () => {
    const turns = goodTurns();
    const provider = new FakeProvider([...turns.slice(0, 2), { text: 'Done: 3 ', truncated: true }, { text: 'notes.' }]);
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('completed');
    expect(st.final_answer).toBe('Done: 3 notes.');
    const last = provider.requests[3].messages.at(-1);
    expect(last?.role).toBe('user');
    expect(last && 'content' in last ? last.content : '').toMatch(/cut off/);
  });

  it('three identical failures in a row stop the run', async () => {
    let k = 0;
    // different args each time (not a repeated call), same error
    svc = makeService(env, new FakeProvider(() => ({ toolCalls: [{ name: 'nope', args: { k: k++ } }] })));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.diagnosis?.code).toBe('repeated_tool_failure');
  });

  it('timeout_s fails the run with a timeout diagnosis', async () => {
    svc = makeService(env, new FakeProvider([{ hang: true }]));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, limits: { timeout_s: 0.05 } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('timeout');
  });
});

describe('RunService: provider errors', () => {
  it('retries a retryable error, then succeeds', async () => {
    const turns = goodTurns();
    svc = makeService(env, new FakeProvider([{ error: { code: 'rate_limited', severity: 'error', summary: '429', retryable: true } }, ...turns]));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('completed');
    expect(JSON.parse(readFileSync(runFile(run_id, 'runtime/metrics.json'), 'utf8')).provider_retries).toBe(1);
    expect(runEvents(run_id, 'notice').some((e) => (e.data as { text: string }).text.includes('rate_limited'))).toBe(true);
  });

  it('gives up after 3 retries', async () => {
    const provider = new FakeProvider(() => ({ error: { code: 'overloaded', severity: 'error', summary: 'busy', retryable: true } }));
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.code).toBe('overloaded');
    expect(provider.requests).toHaveLength(4);
  });

  it('does not retry a non-retryable error', async () => {
    const provider = new FakeProvider(() => ({ error: { code: 'auth', severity: 'error', summary: 'bad key', retryable: false } }));
    svc = makeService(env, provider);
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.diagnosis?.code).toBe('auth');
    expect(provider.requests).toHaveLength(1);
  });

  it('a provider that throws fails the run as data', async () => {
    svc = makeService(env, new FakeProvider([{ throws: 'socket hang up' }]));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.status).toBe('failed');
    expect(st.diagnosis?.summary).toContain('socket hang up');
  });
});

describe('RunService: cancel and queue', () => {
  it('cancels a run inside a tool: cancelled, every file written', async () => {
    svc = makeService(env, new FakeProvider([{ toolCalls: [{ name: 'read_notes', args: {} }] }, { toolCalls: [{ name: 'sleep', args: {} }] }]));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    for await (const e of svc.events(run_id)) {
      if (e.stream === 'tool' && e.data.phase === 'start' && e.data.name === 'sleep') break;
    }
    const st = await svc.cancel(run_id);
    expect(st.status).toBe('cancelled');
    for (const f of ['runtime/run_status.json', 'runtime/metrics.json', 'manifest.json', 'runtime/events.jsonl'])
      expect(existsSync(runFile(run_id, f))).toBe(true);
    expect(events(run_id).at(-1)).toMatchObject({ data: { type: 'run.cancelled' } });
    await expect(svc.cancel(run_id)).rejects.toMatchObject({ code: 'wrong_state', status: 409 });
  });

  it('queues past the concurrency limit, cancels a queued run, refuses past maxQueue', async () => {
    svc = makeService(env, () => new FakeProvider([{ hang: true }]), { concurrency: 1, maxQueue: 1 });
    const a = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const b = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.get(b.run_id))?.status).toBe('queued');
    expect(svc.stats()).toMatchObject({ running: 1, queueDepth: 1 });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).rejects.toMatchObject({ code: 'queue_full', status: 429 });
    const cb = await svc.cancel(b.run_id);
    expect(cb.status).toBe('cancelled');
    expect(runEvents(b.run_id, 'run.state').map((e) => (e.data as { to: string }).to)).toEqual(['queued', 'cancelled']);
    const ca = await svc.cancel(a.run_id);
    expect(ca.status).toBe('cancelled');
    expect(svc.stats()).toMatchObject({ running: 0, queueDepth: 0 });
  });

  it('cancel and timeout also end a provider that ignores the abort signal', async () => {
    svc = makeService(env, () => new FakeProvider([{ deaf: true }]));
    const a = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    for await (const e of svc.events(a.run_id)) if (e.stream === 'run' && e.data.type === 'run.state' && e.data.to === 'model_thinking') break;
    expect((await svc.cancel(a.run_id)).status).toBe('cancelled');
    const b = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, limits: { timeout_s: 0.05 } });
    expect((await svc.wait(b.run_id)).diagnosis?.code).toBe('timeout');
  });

  it('close() cancels live runs', async () => {
    const s = makeService(env, new FakeProvider([{ hang: true }]));
    const { run_id } = await s.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await s.close();
    expect((await s.get(run_id))?.status).toBe('cancelled');
  });
});

describe('RunService: events()', () => {
  it('yields history after N, then live, without gap or duplicate, ending at the terminal event', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const live: number[] = [];
    for await (const e of svc.events(run_id, { after: 1 })) live.push(e.seq);
    // by the terminal event, status and metrics on disk are final
    expect(JSON.parse(readFileSync(runFile(run_id, 'runtime/run_status.json'), 'utf8'))).toMatchObject({ status: 'completed', last_seq: live.at(-1) });
    expect(JSON.parse(readFileSync(runFile(run_id, 'runtime/metrics.json'), 'utf8'))).toMatchObject({ status: 'completed', events: live.at(-1) });
    const all = events(run_id).map((e) => e.seq);
    expect(live).toEqual(all.slice(1));
    const replay: number[] = [];
    for await (const e of svc.events(run_id, { after: 5 })) replay.push(e.seq);
    expect(replay).toEqual(all.slice(5));
  });

  it('throws not_found for an unknown run', async () => {
    svc = makeService(env, new FakeProvider([]));
    const it = svc.events('run_20200101_000000_000000')[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('RunService: request errors', () => {
  it('names the field and lists valid plugins', async () => {
    svc = makeService(env, new FakeProvider([]));
    const err = await svc.create({ plugin: 'nope', input: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(RunRequestError);
    expect(err).toMatchObject({ code: 'unknown_plugin', status: 404, details: { validPlugins: ['notes'] } });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath, extra: 1 } })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { issues: [{ path: 'input.extra', message: expect.stringContaining('not an input') }] },
    });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: 5 } })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { issues: [{ path: 'input.notes_path' }] },
    });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath, title: 'x'.repeat(21) } })).rejects.toMatchObject({
      details: { issues: [{ path: 'input.title' }] },
    });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: join(env.dir, 'missing.txt') } })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('input.notes_path'),
    });
    await expect(svc.create({ plugin: 'notes', input: {}, limits: { max_iterations: 0 } })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { issues: [{ path: 'limits.max_iterations' }] },
    });
    await expect(svc.create('nope')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, conversation_id: '../x' })).rejects.toMatchObject({
      details: { issues: expect.arrayContaining([expect.objectContaining({ path: 'conversation_id' })]) },
    });
    // nothing was created for refused requests
    expect(existsSync(join(env.dataDir, 'runs')) ? readdirSync(join(env.dataDir, 'runs')) : []).toEqual([]);
  });

  it('refuses files outside the input roots (server mode), naming the field', async () => {
    svc = makeService(env, new FakeProvider([]), { inputRoots: [join(env.dataDir, 'uploads')] });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).rejects.toMatchObject({
      code: 'input_outside_roots',
      status: 400,
      details: { issues: [{ path: 'input.notes_path' }] },
    });
  });

  it('accepts files under the input roots but not a symlink there that points outside', async () => {
    const { mkdirSync, copyFileSync, symlinkSync } = await import('node:fs');
    const uploads = join(env.dataDir, 'uploads');
    mkdirSync(uploads, { recursive: true });
    copyFileSync(env.notesPath, join(uploads, 'ok.txt'));
    symlinkSync(env.notesPath, join(uploads, 'link.txt'));
    svc = makeService(env, new FakeProvider(goodTurns()), { inputRoots: [uploads] });
    const ok = await svc.create({ plugin: 'notes', input: { notes_path: join(uploads, 'ok.txt') } });
    expect((await svc.wait(ok.run_id)).status).toBe('completed');
    await expect(svc.create({ plugin: 'notes', input: { notes_path: join(uploads, 'link.txt') } })).rejects.toMatchObject({ code: 'input_outside_roots' });
    await expect(svc.create({ plugin: 'notes', input: { notes_path: join(uploads, '..', '..', 'notes.txt') } })).rejects.toMatchObject({
      code: 'input_outside_roots',
    });
  });

  it('an incompatible skill is a 422', async () => {
    const e2 = makeEnv({ compatible_plugins: ['other'] });
    const s = makeService(e2, new FakeProvider([]));
    await expect(s.create({ plugin: 'notes', input: { notes_path: e2.notesPath } })).rejects.toMatchObject({
      code: 'incompatible',
      status: 422,
      message: expect.stringContaining('not compatible with plugin "notes"'),
    });
    await s.close();
    e2.cleanup();
    const e3 = makeEnv({ required_tools: ['read_notes', 'fly'] });
    const s3 = makeService(e3, new FakeProvider([]));
    await expect(s3.create({ plugin: 'notes', input: { notes_path: e3.notesPath } })).rejects.toMatchObject({
      code: 'incompatible',
      message: expect.stringContaining('fly'),
    });
    // the id reserved for the refused run is given back
    expect(readdirSync(join(e3.dataDir, 'runs'))).toEqual([]);
    await s3.close();
    e3.cleanup();
  });

  it('resolved_config.json and the status name the provider and model, never the key', async () => {
    const key = 'sk-test-SECRET-0123456789';
    const s = makeService(env, new FakeProvider([]), {
      providerResolver: undefined,
      env: { OPENAI_COMPATIBLE_API_KEY: key, OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    const { run_id } = await s.create({ plugin: 'notes', input: { notes_path: env.notesPath }, model: 'openai-compatible:local-model' });
    const st = await s.wait(run_id);
    expect(st.status).toBe('failed'); // nothing listens on port 9
    expect(st).toMatchObject({ provider: 'openai-compatible', model: 'local-model' });
    const cfg = JSON.parse(readFileSync(runFile(run_id, 'runtime/resolved_config.json'), 'utf8'));
    expect(cfg.model).toMatchObject({ provider: 'openai-compatible', model: 'local-model', base_url_host: '127.0.0.1:9' });
    const runDir = join(env.dataDir, 'runs', run_id);
    const { readdirSync: rd, statSync } = await import('node:fs');
    const walk = (d: string): string[] => rd(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
    for (const f of walk(runDir)) expect(readFileSync(f, 'utf8'), f).not.toContain(key);
    await s.close();
  });

  it('an unusable model spec is refused by the default resolver', async () => {
    const s = makeService(env, new FakeProvider([]), { providerResolver: undefined, env: {} });
    await expect(s.create({ plugin: 'notes', input: { notes_path: env.notesPath }, model: 'openai:gpt-4o' })).rejects.toMatchObject({
      code: 'incompatible',
      message: expect.stringContaining('OPENAI_API_KEY'),
    });
    await expect(s.create({ plugin: 'notes', input: { notes_path: env.notesPath }, model: 'nosuch:x' })).rejects.toMatchObject({ code: 'invalid_request' });
    await s.close();
  });
});

describe('RunService: streamed text', () => {
  it('strips thinking tags from assistant text and routes them to reasoning', async () => {
    svc = makeService(
      env,
      new FakeProvider([
        { toolCalls: [{ name: 'read_notes', args: {} }] },
        goodTurns()[1],
        { text: '<think>the user wants a count</think>Three notes.', reasoning: 'plan: answer' },
      ]),
    );
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    const st = await svc.wait(run_id);
    expect(st.final_answer).toBe('Three notes.');
    const evs = events(run_id);
    const deltas = evs
      .filter((e) => e.stream === 'assistant')
      .map((e) => (e.data as { delta: string }).delta)
      .join('');
    expect(deltas).toBe('Three notes.');
    const reasoning = evs
      .filter((e) => e.stream === 'reasoning' && (e.data as { phase?: string }).phase === 'end')
      .map((e) => (e.data as { text: string }).text);
    expect(reasoning.join('')).toContain('the user wants a count');
    expect(reasoning.join('')).toContain('plan: answer');
  });
});

describe('RunService: list', () => {
  it('a run whose status says it ended but whose terminal event never reached the disk gets it at init', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(run_id);
    await svc.close();
    // the disk filled up as the store closed: the terminal line is gone
    const kept = events(run_id).slice(0, -1);
    writeFileSync(runFile(run_id, 'runtime/events.jsonl'), kept.map((e) => JSON.stringify(e)).join('\n') + '\n');
    svc = makeService(env, new FakeProvider([]));
    await svc.init();
    const evs = events(run_id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.at(-1)).toMatchObject({ stream: 'run', data: { type: 'run.completed', status: 'completed', content: 'Done: 3 notes.' } });
    const st = await svc.get(run_id);
    expect(st?.status).toBe('completed');
    expect(st?.last_seq).toBe(evs.length);
    // streams of it end
    const seen: AgentEvent[] = [];
    for await (const e of svc.events(run_id, { after: evs.length - 1 })) seen.push(e);
    expect(seen.map((e) => e.seq)).toEqual([evs.length]);
    // and a second init adds nothing
    await svc.close();
    svc = makeService(env, new FakeProvider([]));
    await svc.init();
    expect(events(run_id)).toHaveLength(evs.length);
  });

  it('filters by status and plugin, pages, and sees runs another process created', async () => {
    svc = makeService(env, () => new FakeProvider(goodTurns()));
    const a = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(a.run_id);
    const other = makeService(env, () => new FakeProvider([{ text: 'no files' }]));
    const b = await other.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await other.wait(b.run_id);
    await other.close();
    const all = await svc.list();
    expect(all.total).toBe(2);
    expect(all.runs.map((r) => r.run_id)).toEqual([b.run_id, a.run_id]);
    expect((await svc.list({ status: 'failed' })).runs.map((r) => r.run_id)).toEqual([b.run_id]);
    expect((await svc.list({ statuses: ['failed', 'completed'] })).runs.map((r) => r.run_id)).toEqual([b.run_id, a.run_id]);
    expect((await svc.list({ statuses: ['queued', 'model_thinking'] })).total).toBe(0);
    expect((await svc.list({ plugin: 'other' })).total).toBe(0);
    expect((await svc.list({ limit: 1, offset: 1 })).runs.map((r) => r.run_id)).toEqual([a.run_id]);
    expect(svc.stats().byState).toMatchObject({ completed: 1, failed: 1 });
  });
});

describe('RunService: used skills', () => {
  it("the terminal event names the run's skill and compute skills the model ran", async () => {
    const { z } = await import('zod');
    const plugin = notesPluginWith([
      {
        name: 'execute_skill',
        description: 'run a compute skill',
        kind: 'skill',
        parameters: z.object({ skill: z.string() }),
        execute: async () => ({ ok: true, content: '{}' }),
      },
    ]);
    svc = makeService(env, new FakeProvider([{ toolCalls: [{ name: 'execute_skill', args: { skill: 'csv_profile' } }] }, ...goodTurns()]), {
      agents: [plugin],
    });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    expect(events(run_id).at(-1)?.data).toMatchObject({ type: 'run.completed', usedSkills: ['notes_skill', 'csv_profile'] });
  });
});

describe('RunService: raw stream log', () => {
  it('appends the model stream to <dataDir>/logs/raw-stream.jsonl when RUNTRAIL_RAW_STREAM=1', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()), { env: { RUNTRAIL_RAW_STREAM: '1' } });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(run_id);
    const log = readFileSync(join(env.dataDir, 'logs', 'raw-stream.jsonl'), 'utf8');
    expect(log).toContain(run_id);
    expect(log).toContain('Done: 3');
  });
});

describe('RunService: conversations, notices, restart', () => {
  it('a run in a conversation gets earlier goals and answers as history', async () => {
    const provider = new FakeProvider((n) => (n % 3 === 0 ? goodTurns()[0] : n % 3 === 1 ? goodTurns()[1] : { text: `answer ${n}` }));
    svc = makeService(env, provider);
    const a = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'first goal', conversation_id: 'chat-1' });
    await svc.wait(a.run_id);
    const b = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath }, goal: 'second goal', conversation_id: 'chat-1' });
    await svc.wait(b.run_id);
    const first = provider.requests[3].messages;
    expect(first.slice(0, 3)).toEqual([
      { role: 'user', content: 'first goal' },
      { role: 'assistant', content: 'answer 2' },
      { role: 'user', content: 'second goal' },
    ]);
  });

  it("appends process-registry notices before a model turn and ends the run's sessions", async () => {
    const provider = new FakeProvider(goodTurns());
    let drained = 0;
    const killed: string[] = [];
    svc = makeService(env, provider, {
      processRegistry: { drainNotices: () => (drained++ === 1 ? ['job sleepy exited 0'] : []), killScope: async (id) => void killed.push(id) },
    });
    const { run_id } = await svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    await svc.wait(run_id);
    expect(provider.requests[1].messages.at(-1)).toEqual({ role: 'user', content: '[notice] job sleepy exited 0' });
    // background sessions the run left are ended with it
    expect(killed).toEqual([run_id]);
  });

  it('init() marks a run left live by a crash as failed (interrupted), repairing a torn events line', async () => {
    const s1 = makeService(env, new FakeProvider([{ hang: true }]));
    const { run_id } = await s1.create({ plugin: 'notes', input: { notes_path: env.notesPath } });
    for await (const e of s1.events(run_id)) if (e.stream === 'run' && e.data.type === 'run.state' && e.data.to === 'model_thinking') break;
    // simulate the crash: the status file says model_thinking and the log ends mid-line
    const { appendFileSync } = await import('node:fs');
    const status = JSON.parse(readFileSync(runFile(run_id, 'runtime/run_status.json'), 'utf8'));
    // a runtime that does not resume runs (config.json durability.resume: false) ends them interrupted
    const noResume = { defaults: () => ({ durability: { resume: false } }) };
    const s2 = makeService(env, new FakeProvider([]), noResume);
    await s1.close();
    writeFileSync(runFile(run_id, 'runtime/run_status.json'), JSON.stringify({ ...status, status: 'model_thinking' }));
    const before = events(run_id).filter((e) => !(e.stream === 'run' && ['run.cancelled'].includes(e.data.type as string)));
    writeFileSync(runFile(run_id, 'runtime/events.jsonl'), before.map((e) => JSON.stringify(e)).join('\n') + '\n');
    appendFileSync(runFile(run_id, 'runtime/events.jsonl'), '{"runId":"torn');
    await s2.init();
    const st = await s2.get(run_id);
    expect(st?.status).toBe('failed');
    expect(st?.diagnosis?.code).toBe('interrupted');
    const evs = events(run_id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.at(-1)).toMatchObject({ data: { type: 'run.failed', diagnosis: { code: 'interrupted' } } });
    expect(st?.last_seq).toBe(evs.length);
    expect(JSON.parse(readFileSync(runFile(run_id, 'manifest.json'), 'utf8'))).toMatchObject({ run_id, status: 'failed' });
    // a run another live process owns (e.g. a server beside this CLI) is not a crash
    writeFileSync(runFile(run_id, 'runtime/run_status.json'), JSON.stringify({ ...status, status: 'model_thinking' }));
    const { hostname } = await import('node:os');
    writeFileSync(runFile(run_id, 'runtime/owner.json'), JSON.stringify({ pid: process.ppid, host: hostname() }));
    const s3 = makeService(env, new FakeProvider([]), noResume);
    await s3.init();
    expect((await s3.get(run_id))?.status).toBe('model_thinking');
    // ... and this service cannot cancel it: the error says where it can be
    await expect(s3.cancel(run_id)).rejects.toMatchObject({
      code: 'wrong_state',
      message: expect.stringMatching(/in another runtrail process; cancel it there/),
    });
    await s3.close();
    expect(readFileSync(runFile(run_id, 'runtime/trace.jsonl'), 'utf8')).toContain('"event":"run.failed"');
    await s2.close();
  });
});
