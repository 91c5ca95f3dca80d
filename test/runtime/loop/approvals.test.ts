/** `ask` tool calls wait for a person; the decision (or the timeout) is an event, replayable. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { ExtensionRegistry } from '../../../src/extensions/extension-registry.js';
import { permissionFor } from '../../../src/runtime/loop/approvals.js';
import { RunService } from '../../../src/runtime/service/run-service.js';
import { agentFile, makeProject, type ProjectFixture } from '../../extensions/project-fixture.js';
import { eventually } from '../../tools/helpers.js';

let p: ProjectFixture;
let service: RunService;
afterEach(async () => {
  await service?.close();
  p?.cleanup();
});

const WRITE = { name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } };

async function start(opts: { permissions: string; turns: unknown[]; limits?: string }) {
  p = makeProject({
    '.runtrail/agents/careful.md': agentFile(
      `name: careful\ndescription: asks first\nmodel: script:careful.turns.json\npermissions: ${opts.permissions}${opts.limits ? `\nlimits: ${opts.limits}` : ''}`,
    ),
    '.runtrail/agents/careful.turns.json': JSON.stringify(opts.turns),
  });
  const registry = await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none') });
  expect(registry.problems).toEqual([]);
  service = new RunService({ dataDir: join(p.dir, '.runtrail'), agentSource: registry, env: {}, cwd: p.dir, processRegistry: null });
  const created = await service.create({ plugin: 'careful', input: {} });
  const events: AgentEvent[] = [];
  const reading = (async () => {
    for await (const e of service.events(created.run_id)) events.push(e);
  })();
  return { runId: created.run_id, events, reading };
}

const approvals = (events: AgentEvent[]) => events.flatMap((e) => (e.stream === 'tool' && e.data.phase === 'approval' ? [e.data.approval] : []));
const results = (events: AgentEvent[]) => events.flatMap((e) => (e.stream === 'tool' && e.data.phase === 'result' ? [e.data] : []));

describe('approvals', () => {
  it('permissionFor: exact name, then the most specific glob, then *, else allow', () => {
    const rules = { exec: 'ask', 'mcp__fs__*': 'ask', 'mcp__fs__read*': 'allow', '*': 'deny' } as const;
    expect(['exec', 'mcp__fs__write', 'mcp__fs__read_file', 'other'].map((t) => permissionFor(rules, t))).toEqual(['ask', 'ask', 'allow', 'deny']);
    expect(permissionFor(undefined, 'exec')).toBe('allow');
  });

  it('an ask call waits in awaiting_approval until approved through the service, then runs', async () => {
    const r = await start({ permissions: '{ write_artifact: ask }', turns: [{ toolCalls: [WRITE] }, { text: 'written' }] });
    expect(await eventually(() => service.pendingApprovals(r.runId).length === 1)).toBe(true);
    expect((await service.get(r.runId))!.status).toBe('awaiting_approval');
    const [pending] = service.pendingApprovals(r.runId);
    expect(pending).toMatchObject({ status: 'pending', tool: 'write_artifact', args: WRITE.args });
    await expect(service.decideApproval(r.runId, 'apr_nope', { decision: 'approve', by: 'api' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.decideApproval(r.runId, pending.id, { decision: 'maybe', by: 'api' })).rejects.toMatchObject({ code: 'invalid_request' });
    const decided = await service.decideApproval(r.runId, pending.id, { decision: 'approve', by: 'api' });
    expect(decided).toMatchObject({ status: 'approved', by: 'api' });
    const final = await service.wait(r.runId);
    await r.reading;
    expect(final.status).toBe('completed');
    expect(approvals(r.events).map((a) => [a.status, a.by])).toEqual([
      ['pending', undefined],
      ['approved', 'api'],
    ]);
    expect(results(r.events)[0]).toMatchObject({ name: 'write_artifact', isError: false });
    // the states the run went through, from the events (replay shows the wait)
    const states = r.events.flatMap((e) => (e.stream === 'run' && e.data.type === 'run.state' ? [e.data.to] : []));
    expect(states).toEqual(expect.arrayContaining(['tool_executing', 'awaiting_approval', 'completed']));
    // a decision on a finished run is refused
    await expect(service.decideApproval(r.runId, pending.id, { decision: 'deny', by: 'api' })).rejects.toMatchObject({ code: 'wrong_state' });
  });

  it('a denial is a failed tool result the model reads, with the reason; a second decision is 409', async () => {
    const r = await start({ permissions: '{ "*": ask }', turns: [{ toolCalls: [WRITE] }, { text: 'understood' }] });
    expect(await eventually(() => service.pendingApprovals(r.runId).length === 1)).toBe(true);
    const id = service.pendingApprovals(r.runId)[0].id;
    await service.decideApproval(r.runId, id, { decision: 'deny', reason: 'not today', by: 'web' });
    await expect(service.decideApproval(r.runId, id, { decision: 'approve', by: 'api' })).rejects.toMatchObject({
      code: 'wrong_state',
      message: expect.stringContaining('already denied (by web)'),
    });
    const final = await service.wait(r.runId);
    await r.reading;
    expect(final.status).toBe('completed');
    const [denied] = results(r.events);
    expect(denied).toMatchObject({ isError: true, diagnosis: { code: 'approval_denied' } });
    expect(denied.result).toContain('denied by web: not today');
  });

  it('no decision within approval_timeout_s is a denial by timeout', async () => {
    const r = await start({
      permissions: '{ write_artifact: ask }',
      limits: '{ approval_timeout_s: 0.2 }',
      turns: [{ toolCalls: [WRITE] }, { text: 'gave up' }],
    });
    const final = await service.wait(r.runId);
    await r.reading;
    expect(final.status).toBe('completed');
    expect(approvals(r.events).at(-1)).toMatchObject({ status: 'denied', by: 'timeout' });
    expect(results(r.events)[0].result).toMatch(/no one decided in time/);
  });

  it('deny needs no person; a waiting run can be cancelled', async () => {
    const d = await start({ permissions: '{ write_artifact: deny }', turns: [{ toolCalls: [WRITE] }, { text: 'ok' }] });
    await service.wait(d.runId);
    await d.reading;
    expect(results(d.events)[0]).toMatchObject({ isError: true, diagnosis: { code: 'permission_denied' } });
    await service.close();
    p.cleanup();

    const c = await start({ permissions: '{ write_artifact: ask }', turns: [{ toolCalls: [WRITE] }, { text: 'never' }] });
    expect(await eventually(() => service.pendingApprovals(c.runId).length === 1)).toBe(true);
    const final = await service.cancel(c.runId);
    await c.reading;
    expect(final.status).toBe('cancelled');
  });
});
