/**
 * A run's processes are sandboxed by the policy of its agent within the operator's config.json:
 * resolved_config.json says how, each exec step says how it ran, a refused write is a
 * `sandbox_denied` diagnosis, and a run that needs the sandbox where it cannot start fails at once.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import type { ProcessRegistry } from '../../src/tools/process-registry.js';
import { defaultProcessRegistry } from '../../src/tools/default-process-registry.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';

let p: ProjectFixture | null = null;
let service: RunService | null = null;
let processes: ProcessRegistry | null = null;
afterEach(async () => {
  await service?.close();
  await processes?.shutdown();
  service = null;
  processes = null;
  p?.cleanup();
  p = null;
});

async function serviceOver(files: Record<string, string>) {
  p = makeProject(files);
  const registry = await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none') });
  // the builtin exec tool starts its sessions on the process-wide registry, as the server does
  processes = null;
  service = new RunService({
    dataDir: join(p.dir, '.runtrail'),
    agentSource: registry,
    skillDirs: registry.skillDirs,
    defaults: () => registry.config,
    inputRoots: 'any',
    env: {},
    cwd: p.dir,
    processRegistry: defaultProcessRegistry(),
  });
  return { service, registry };
}

async function runToEnd(s: RunService, req: Record<string, unknown>) {
  const created = await s.create(req);
  const events: AgentEvent[] = [];
  for await (const e of s.events(created.run_id)) events.push(e);
  const status = await s.wait(created.run_id);
  const root = join(p!.dir, '.runtrail', 'runs', created.run_id);
  return { status, events, root, read: (rel: string) => readFileSync(join(root, rel), 'utf8') };
}

const script = (turns: unknown[]) => `${JSON.stringify(turns)}\n`;
const toolResults = (events: AgentEvent[]) => events.flatMap((e) => (e.stream === 'tool' && e.data.phase === 'result' ? [e.data] : []));

function execAgent(extra = '') {
  return {
    '.runtrail/agents/sh.md': agentFile(`name: sh\ndescription: d\nmodel: script:sh.turns.json\ntools: [exec]${extra}`),
    '.runtrail/agents/sh.turns.json': script([
      { toolCalls: [{ name: 'exec', args: { command: 'echo inside; touch /etc/runtrail-escape' } }] },
      { text: 'done' },
    ]),
  };
}

describe('a run under the sandbox', () => {
  it('records its policy in resolved_config.json and each exec step says how it ran; a refused write is sandbox_denied', async () => {
    const { service: s } = await serviceOver(execAgent('\nsandbox: { network: { allow: ["registry.example.org"] }, limits: { processes: 256 } }'));
    const r = await runToEnd(s, { plugin: 'sh', input: {} });
    const config = JSON.parse(r.read('runtime/resolved_config.json'));
    expect(config.sandbox).toMatchObject({
      mode: 'on',
      network: { mode: 'allow', allow: ['registry.example.org'] },
      limits: { processes: { value: 256 } },
    });
    const [result] = toolResults(r.events);
    expect(result).toMatchObject({ name: 'exec', isError: true, diagnosis: { code: 'sandbox_denied' } });
    expect(JSON.stringify(result.diagnosis)).toContain('/etc/runtrail-escape');
    expect(JSON.stringify(result)).toContain('"sandbox":{"mode":"on","network":"allow registry.example.org"}');
  });

  it('runs unsandboxed only by the operator\'s mode "off", and says so in resolved_config.json', async () => {
    const { service: s } = await serviceOver({ ...execAgent(), '.runtrail/config.json': JSON.stringify({ sandbox: { mode: 'off' } }) });
    const r = await runToEnd(s, { plugin: 'sh', input: {} });
    const config = JSON.parse(r.read('runtime/resolved_config.json'));
    expect(config.sandbox).toMatchObject({ mode: 'off' });
    expect(config.sandbox.warning).toMatch(/on the host/);
    const [result] = toolResults(r.events);
    expect(JSON.stringify(result)).toContain('"sandbox":{"mode":"off","network":"host"}');
  });

  it('fails at once, naming what to install, where bubblewrap is missing', async () => {
    const before = process.env.RUNTRAIL_BWRAP;
    process.env.RUNTRAIL_BWRAP = '/nonexistent/bwrap';
    try {
      const { service: s } = await serviceOver(execAgent());
      const r = await runToEnd(s, { plugin: 'sh', input: {} });
      expect(r.status.status).toBe('failed');
      expect(r.status.diagnosis).toMatchObject({ code: 'sandbox_unavailable' });
      expect(r.status.diagnosis?.summary).toMatch(/bubblewrap is not installed.*apt-get install bubblewrap/);
      expect(toolResults(r.events)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.RUNTRAIL_BWRAP;
      else process.env.RUNTRAIL_BWRAP = before;
    }
  });

  it('refuses a bad sandbox setting naming the file, field and value', async () => {
    const { registry } = await serviceOver({
      ...execAgent('\nsandbox: { network: everything }'),
      '.runtrail/config.json': JSON.stringify({ sandbox: { mode: 'maybe' } }),
    });
    const lines = registry.problems.map((q) => `${q.file} ${q.field ?? ''} ${q.message}`).join('\n');
    expect(lines).toMatch(/config\.json.*sandbox.*mode/);
    expect(lines).toMatch(/sh\.md.*sandbox.*network/);
  });

  function elevatedAgent(config: unknown) {
    return {
      '.runtrail/agents/up.md': agentFile('name: up\ndescription: d\nmodel: script:up.turns.json\ntools: [exec]'),
      '.runtrail/agents/up.turns.json': script([
        { toolCalls: [{ name: 'exec', args: { command: 'ls -d /root && echo ON-THE-HOST', elevated: true } }] },
        { text: 'done' },
      ]),
      '.runtrail/config.json': JSON.stringify(config),
    };
  }

  it('refuses elevated where the operator did not enable it', async () => {
    const { service: s } = await serviceOver(elevatedAgent({}));
    const r = await runToEnd(s, { plugin: 'up', input: {} });
    const [result] = toolResults(r.events);
    expect(result).toMatchObject({ name: 'exec', isError: true });
    expect(String(result.result)).toMatch(/elevated mode is off on this server/);
    expect(String(result.result)).not.toContain('ON-THE-HOST');
  });

  it('runs elevated on the host only after a person approved it where the operator says ask; the step says elevated', async () => {
    const { service: s } = await serviceOver(elevatedAgent({ sandbox: { elevated: 'ask' } }));
    const created = await s.create({ plugin: 'up', input: {} });
    let pending: Array<{ id: string }> = [];
    for (let i = 0; i < 200 && pending.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      pending = (s.pendingApprovals?.(created.run_id) ?? []) as Array<{ id: string }>;
    }
    expect(pending).toHaveLength(1);
    await s.decideApproval!(created.run_id, pending[0].id, { decision: 'approve', by: 'api' });
    const events: AgentEvent[] = [];
    for await (const e of s.events(created.run_id)) events.push(e);
    const [result] = toolResults(events);
    expect(result).toMatchObject({ name: 'exec', isError: false });
    expect(String(result.result)).toContain('ON-THE-HOST');
    expect(JSON.stringify(result)).toContain('"sandbox":{"mode":"elevated","network":"host"}');
    // the approval events say who decided
    const decided = events.filter((e) => e.stream === 'tool' && e.data.phase === 'approval').map((e) => JSON.stringify(e));
    expect(decided.some((e) => /"status":"approved"/.test(e) && /"by":"api"/.test(e))).toBe(true);
  });

  it('runs elevated at once where the operator says allow', async () => {
    const { service: s } = await serviceOver(elevatedAgent({ sandbox: { elevated: 'allow' } }));
    const r = await runToEnd(s, { plugin: 'up', input: {} });
    const [result] = toolResults(r.events);
    expect(String(result.result)).toContain('ON-THE-HOST');
    expect(JSON.parse(r.read('runtime/resolved_config.json')).sandbox.elevated).toBe('allow');
  });

  it("reads a project path the agent's sandbox.read lists (relative to the project), and writes none of it", async () => {
    const { service: s } = await serviceOver({
      '.runtrail/agents/rd.md': agentFile('name: rd\ndescription: d\nmodel: script:rd.turns.json\ntools: [exec]\nsandbox: { read: ["docs"] }'),
      '.runtrail/agents/rd.turns.json': script([{ text: 'placeholder' }]),
      'docs/a.txt': 'project doc\n',
    });
    const docs = join(p!.dir, 'docs');
    // as an editor leaves a project (the RunService of an earlier test made this process's umask 077):
    // a root server's sandbox user reads what others may read
    chmodSync(docs, 0o755);
    chmodSync(join(docs, 'a.txt'), 0o644);
    writeFileSync(
      join(p!.dir, '.runtrail/agents/rd.turns.json'),
      script([{ toolCalls: [{ name: 'exec', args: { command: `cat ${docs}/a.txt; touch ${docs}/b.txt` } }] }, { text: 'done' }]),
    );
    const r = await runToEnd(s, { plugin: 'rd', input: {} });
    expect(JSON.parse(r.read('runtime/resolved_config.json')).sandbox.read).toEqual([docs]);
    const [result] = toolResults(r.events);
    expect(String(result.result)).toContain('project doc');
    expect(result.diagnosis).toMatchObject({ code: 'sandbox_denied' });
    expect(existsSync(join(docs, 'b.txt'))).toBe(false);
  });
});
