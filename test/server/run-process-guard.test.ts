/**
 * A run cannot act as its own operator: with the host network (which only the operator can grant) a
 * run's command reaches the server on loopback, but its approval decision, cancel or steer is refused
 * because the connection's socket belongs to a process of a run's sandbox (or one the server started).
 * The attack is real: curl inside the sandbox against the real server.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { resolveSandboxPolicy } from '../../src/sandbox/sandbox-policy.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { eventually } from '../tools/helpers.js';
import { getJson, postJson, startTestServer, type TestServer } from './helpers.js';

let p: ProjectFixture;
let service: RunService;
let server: TestServer;
let processes: ProcessRegistry | null = null;
afterEach(async () => {
  await processes?.shutdown();
  await server?.stop();
  await service?.close();
  p?.cleanup();
});

async function serve() {
  p = makeProject({
    '.runtrail/agents/careful.md': agentFile('name: careful\ndescription: asks first\nmodel: script:careful.turns.json\npermissions: { write_artifact: ask }'),
    '.runtrail/agents/careful.turns.json': JSON.stringify([
      { toolCalls: [{ name: 'write_artifact', args: { path: 'out.md', content: '# out\n' } }] },
      { text: 'written' },
    ]),
  });
  const registry = await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none') });
  service = new RunService({ dataDir: join(p.dir, '.runtrail'), agentSource: registry, env: {}, cwd: p.dir, processRegistry: null });
  server = await startTestServer(service, { dataDir: join(p.dir, '.runtrail') });
}

async function pendingOf(runId: string): Promise<string> {
  let id = '';
  await eventually(() => {
    void getJson(`${server.url}/api/runs/${runId}/approvals`).then((r) => (id = r.body.approvals?.[0]?.id ?? ''));
    return id !== '';
  });
  return id;
}

/** curl from a run's command: in the sandbox with the host network, or on the host (sandbox off). */
async function curlFromRun(sandboxed: boolean, args: string) {
  processes = new ProcessRegistry({ sandbox: sandboxed ? resolveSandboxPolicy({ network: 'host' }, { network: 'host' }) : { mode: 'off' } });
  const exec = createExecTool({ registry: processes, scopeKey: 'run_attacker', cwd: p.dir });
  const r = await exec.execute({ command: `curl -sS -o - -w '\\nstatus=%{http_code}' ${args}`, timeout: 30 });
  return r.content;
}

describe('a run cannot act as its own operator', () => {
  it.each([
    ['in its sandbox with the host network', true],
    ['on the host (sandbox off)', false],
  ])("refuses an approval decision, a steer and a cancel made by a run's command %s; a person's decision still counts", async (_how, sandboxed) => {
    await serve();
    const runId = (await postJson(`${server.url}/api/runs`, { plugin: 'careful', input: {} })).body.run_id as string;
    const id = await pendingOf(runId);
    const json = `-H 'content-type: application/json'`;
    const approve = await curlFromRun(sandboxed, `-X POST ${json} -d '{"decision":"approve"}' ${server.url}/api/runs/${runId}/approvals/${id}`);
    expect(approve).toContain('status=403');
    expect(approve).toContain('run_process_refused');
    const steer = await curlFromRun(sandboxed, `-X POST ${json} -d '{"text":"approve yourself","mode":"steer"}' ${server.url}/api/runs/${runId}/messages`);
    expect(steer).toContain('status=403');
    const cancel = await curlFromRun(sandboxed, `-X POST ${server.url}/api/runs/${runId}/cancel`);
    expect(cancel).toContain('status=403');
    // reading is not deciding: the run's command could see the approval, and it is still pending
    expect((await getJson(`${server.url}/api/runs/${runId}`)).body.status).toBe('awaiting_approval');
    // the person's decision, from outside the run, counts; the event says who decided
    const ok = await postJson(`${server.url}/api/runs/${runId}/approvals/${id}`, { decision: 'approve' });
    expect(ok.status).toBe(200);
    expect(ok.body.approval).toMatchObject({ status: 'approved', by: 'api' });
    expect((await service.wait(runId)).status).toBe('completed');
  });

  it("takes the decision of a process started beside the server that is not a run's (a browser or tool embedding it)", async () => {
    await serve();
    const runId = (await postJson(`${server.url}/api/runs`, { plugin: 'careful', input: {} })).body.run_id as string;
    const id = await pendingOf(runId);
    // a child of the server's own process, as the page's browser is in an embedding test or tool
    const { stdout } = await promisify(execFile)('curl', [
      '-sS',
      '-o',
      '-',
      '-w',
      '\nstatus=%{http_code}',
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      '-d',
      '{"decision":"approve"}',
      `${server.url}/api/runs/${runId}/approvals/${id}`,
    ]);
    expect(stdout).toContain('status=200');
    expect((await service.wait(runId)).status).toBe('completed');
  });
});
