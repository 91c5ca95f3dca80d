/**
 * A Markdown agent runs exactly like a builtin plugin: capability snapshot, plan and todo, stop
 * validation of its artifact contract, manifest, replay — driven here by script models that sit next
 * to the agent files (a relative `script:` path resolves against the agent file).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { agentFile, makeProject, NOTES_AGENT, type ProjectFixture } from './project-fixture.js';

let p: ProjectFixture;
let service: RunService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
  p?.cleanup();
});

async function serviceOver(files: Record<string, string>): Promise<{ service: RunService; registry: ExtensionRegistry }> {
  p = makeProject(files);
  const registry = await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none') });
  service = new RunService({
    dataDir: join(p.dir, '.runtrail'),
    agentSource: registry,
    skillDirs: registry.skillDirs,
    defaults: () => registry.config,
    inputRoots: 'any',
    env: {},
    cwd: p.dir,
    processRegistry: null,
  });
  return { service, registry };
}

async function runToEnd(s: RunService, req: Record<string, unknown>) {
  const created = await s.create(req);
  const events: AgentEvent[] = [];
  for await (const e of s.events(created.run_id)) events.push(e);
  const status = await s.wait(created.run_id);
  const root = join(p.dir, '.runtrail', 'runs', created.run_id);
  return { status, events, root, read: (rel: string) => readFileSync(join(root, rel), 'utf8') };
}

const toolResults = (events: AgentEvent[]) => events.flatMap((e) => (e.stream === 'tool' && e.data.phase === 'result' ? [e.data] : []));
const script = (turns: unknown[]) => `${JSON.stringify(turns)}\n`;
const GOOD_NOTES = '# Notes\n\n## Highlights\n\n- sync retries\n\n## Fixes\n\n- export order\n';

describe('a Markdown agent run', () => {
  it('completes through plan, stop validation and manifest, with its own model file and file input', async () => {
    const { service: s } = await serviceOver({
      '.runtrail/agents/notes.md': NOTES_AGENT.replace('version: 1.2.0', 'version: 1.2.0\nmodel: script:notes.turns.json'),
      '.runtrail/agents/notes.turns.json': script([
        { toolCalls: [{ name: 'read_file', args: { path: 'input/changes.md' } }] },
        { toolCalls: [{ name: 'write_artifact', args: { path: 'notes.json', content: { version: '1.2.0' } } }] },
        {
          toolCalls: [
            { name: 'write_artifact', args: { path: 'notes.json', content: { version: '1.2.0', items: ['sync'] } } },
            { name: 'write_artifact', args: { path: 'NOTES.md', content: GOOD_NOTES } },
          ],
        },
        { text: 'Done: NOTES.md and notes.json.' },
      ]),
      'changes.md': '- sync retries\n- export order\n',
    });
    const r = await runToEnd(s, { plugin: 'notes', input: { changes: 'changes.md' } });
    expect(r.status.status).toBe('completed');
    expect(r.status).toMatchObject({ plugin: 'notes', plugin_version: '1.2.0', provider: 'script', goal: 'Write the notes' });
    const results = toolResults(r.events);
    expect(results[0]).toMatchObject({ name: 'read_file', isError: false, result: '- sync retries\n- export order' });
    // the JSON artifact is checked as it is written: the model sees the failing field and fixes it
    expect(results[1]).toMatchObject({ name: 'write_artifact', isError: true, diagnosis: { code: 'artifact_rejected' } });
    expect(results[1].result).toContain('notes.json: items: is required');
    expect(results.slice(2).map((x) => x.isError)).toEqual([false, false]);
    expect(JSON.parse(r.read('artifacts/notes.json'))).toEqual({ version: '1.2.0', items: ['sync'] });
    const todos = JSON.parse(r.read('runtime/todo_state.json')) as { todos: Array<{ id: string; status: string }> };
    expect(todos.todos.map((t) => [t.id, t.status])).toEqual([
      ['write-NOTES.md', 'completed'],
      ['write-notes.json', 'completed'],
    ]);
    const manifest = JSON.parse(r.read('manifest.json')) as { documents: Array<{ path: string }> };
    expect(manifest.documents.map((d) => d.path).sort()).toEqual(['artifacts/NOTES.md', 'artifacts/notes.json']);
    const system = r.read('runtime/system_prompt.md');
    expect(system).toContain('You do the task with the tools you have.');
    expect(system).toContain('`artifacts/NOTES.md` (markdown, required): the notes. Headings: "Highlights", "Fixes".');
    const config = JSON.parse(r.read('runtime/resolved_config.json')) as { capabilities: { allowedTools: string[] } };
    expect(config.capabilities.allowedTools).toEqual(['read_file', 'write_artifact', 'list_artifacts']);
    expect(existsSync(join(r.root, 'input', 'changes.md'))).toBe(true);
  });

  it('fails with hook.blocked and artifact.rejected when its contract is not met', async () => {
    const { service: s } = await serviceOver({
      '.runtrail/agents/notes.md': NOTES_AGENT,
      'turns.json': script([{ toolCalls: [{ name: 'write_artifact', args: { path: 'NOTES.md', content: '# Notes\n\n## Highlights\n' } }] }, { text: 'done' }]),
      'changes.md': 'x\n',
    });
    const r = await runToEnd(s, { plugin: 'notes', input: { changes: 'changes.md' }, model: 'script:turns.json' });
    expect(r.status.status).toBe('failed');
    expect(r.status.diagnosis).toMatchObject({ code: 'validation_failed' });
    const run = r.events.flatMap((e) => (e.stream === 'run' ? [e.data] : []));
    expect(run.filter((d) => d.type === 'hook.blocked').map((d) => (d as { hook: string }).hook)).toEqual(
      expect.arrayContaining(['RequiredOutput', 'ArtifactContract']),
    );
    const rejected = run.filter((d) => d.type === 'artifact.rejected') as Array<{ path: string; reasons: string[] }>;
    expect(rejected.map((d) => d.path).sort()).toEqual(['NOTES.md', 'notes.json']);
    expect(rejected.find((d) => d.path === 'NOTES.md')!.reasons[0]).toContain('lacks the heading "Fixes"');
    // a failed run still writes what it made
    expect(r.read('artifacts/NOTES.md')).toContain('Highlights');
  });

  it('refuses an input that breaks its JSON Schema, naming the field', async () => {
    const { service: s } = await serviceOver({ '.runtrail/agents/notes.md': NOTES_AGENT });
    await expect(s.create({ plugin: 'notes', input: { other: 1 } })).rejects.toMatchObject({
      code: 'invalid_request',
      details: {
        issues: expect.arrayContaining([
          { path: 'input.changes', message: 'is required and was not given' },
          { path: 'input.other', message: expect.stringMatching(/^is not an input of this agent \(its inputs: changes/) },
        ]),
      },
    });
  });

  it('with the offline model fails at once with offline_unsupported, saying which models can run it', async () => {
    const { service: s } = await serviceOver({ '.runtrail/agents/notes.md': NOTES_AGENT, 'changes.md': 'x\n' });
    const r = await runToEnd(s, { plugin: 'notes', input: { changes: 'changes.md' } });
    expect(r.status.status).toBe('failed');
    expect(r.status.diagnosis).toMatchObject({
      code: 'offline_unsupported',
      summary: 'the offline model cannot run notes: it has no reference procedure to follow',
    });
    expect(r.status.diagnosis!.hint).toMatch(/openai:<model>.*script:<turns\.json>/);
    expect(toolResults(r.events)).toEqual([]);
  });

  it('gets its skills by progressive disclosure: listed in the prompt, loaded with load_skill, files through skill://', async () => {
    const { service: s } = await serviceOver({
      '.runtrail/skills/house-style/SKILL.md': '---\nname: house-style\ndescription: How our notes read\n---\nUse short bullet points.\n',
      '.runtrail/skills/house-style/references/words.md': 'Say "fix", not "resolution".\n',
      '.runtrail/agents/styled.md': agentFile('name: styled\ndescription: d\nmodel: script:styled.turns.json\nskills: [house-style]'),
      '.runtrail/agents/styled.turns.json': script([
        { toolCalls: [{ name: 'load_skill', args: { name: 'house-style' } }] },
        {
          toolCalls: [
            { name: 'read_file', args: { path: 'skill://house-style/references/words.md' } },
            { name: 'read_file', args: { path: 'skill://house-style/../../agents/styled.md' } },
          ],
        },
        { text: 'ok' },
      ]),
    });
    const r = await runToEnd(s, { plugin: 'styled', input: {} });
    expect(r.status.status).toBe('completed');
    const system = r.read('runtime/system_prompt.md');
    expect(system).toContain('- `house-style`: How our notes read');
    expect(system).not.toContain('Use short bullet points.');
    const [loaded, ref, escape] = toolResults(r.events);
    expect(loaded.result).toContain('Use short bullet points.');
    expect(loaded.result).toContain('- references/words.md');
    expect(ref).toMatchObject({ isError: false, result: 'Say "fix", not "resolution".' });
    expect(escape).toMatchObject({ isError: true, diagnosis: { code: 'path_refused' } });
    expect(JSON.parse(r.read('runtime/skill_activation.json')).granted_skills).toEqual([{ name: 'house-style', version: '0.0.0', format: 'agent-skill' }]);
  });

  it('reaches code-plugin tools by name only; ctx has runId and workspace; a throwing or hanging tool is a failed result, not a crashed run', async () => {
    const { service: s } = await serviceOver({
      '.runtrail/plugins/tools.mjs': `export default {
  name: 'tools',
  tools: [
    { name: 'whoami', description: 'run id and a file', parameters: { type: 'object' }, async execute(_a, ctx) { ctx.reporter.progress({ stage: 'look', current: 1, total: 1 }); await ctx.workspace.writeArtifact('who.txt', ctx.runId); return { ok: true, content: { runId: ctx.runId } }; } },
    { name: 'explode', description: 'throws', parameters: { type: 'object' }, async execute() { throw new TypeError('wires crossed'); } },
    { name: 'hang', description: 'never ends', timeoutMs: 300, parameters: { type: 'object' }, execute(_a, ctx) { ctx.signal.addEventListener('abort', () => { const why = ctx.signal.reason; globalThis.__hangStopped = why instanceof Error ? why.message : String(why); }, { once: true }); return new Promise(() => {}); } },
    { name: 'unlisted', description: 'not granted', parameters: { type: 'object' }, execute: () => 'x' },
  ],
};
`,
      '.runtrail/agents/toolish.md': agentFile('name: toolish\ndescription: d\nmodel: script:toolish.turns.json\ntools: [whoami, explode, hang]'),
      '.runtrail/agents/toolish.turns.json': script([
        {
          toolCalls: [
            { name: 'whoami', args: {} },
            { name: 'explode', args: {} },
            { name: 'hang', args: {} },
            { name: 'unlisted', args: {} },
          ],
        },
        { text: 'survived' },
      ]),
    });
    const r = await runToEnd(s, { plugin: 'toolish', input: {} });
    expect(r.status.status).toBe('completed');
    expect(r.status.final_answer).toBe('survived');
    const [who, boom, hang, unlisted] = toolResults(r.events);
    expect(JSON.parse(who.result)).toEqual({ runId: r.status.run_id });
    expect(r.read('artifacts/who.txt')).toBe(r.status.run_id);
    expect(boom).toMatchObject({ isError: true, diagnosis: { code: 'tool_error', summary: 'explode failed: wires crossed', detail: 'TypeError' } });
    expect(hang).toMatchObject({ isError: true, diagnosis: { code: 'tool_timeout' } });
    expect((globalThis as { __hangStopped?: string }).__hangStopped).toBe('timeout'); // ctx.signal told the plugin why
    expect(unlisted).toMatchObject({ isError: true, diagnosis: { code: 'tool_not_found' } });
    const progress = r.events.filter((e) => e.stream === 'process' && e.data.event.stage === 'look');
    expect(progress.length).toBeGreaterThan(0);
  });

  it("records model calls unless capture.model_io is false in config.json or in the agent's frontmatter", async () => {
    const turns = script([{ text: 'ok' }]);
    const files = {
      '.runtrail/agents/open.md': agentFile('name: open\ndescription: d\nmodel: script:t.json\ncapture: { max_call_bytes: 65536 }'),
      '.runtrail/agents/private.md': agentFile('name: private\ndescription: d\nmodel: script:t.json\ncapture: { model_io: false }'),
      '.runtrail/agents/t.json': turns,
    };
    const { service: s } = await serviceOver(files);
    const open = await runToEnd(s, { plugin: 'open', input: {} });
    expect(JSON.parse(open.read('runtime/resolved_config.json')).capture).toEqual({ model_io: true, max_call_bytes: 65536 });
    expect(open.read('runtime/model_calls.jsonl').trim().split('\n')).toHaveLength(1);
    const closed = await runToEnd(s, { plugin: 'private', input: {} });
    expect(JSON.parse(closed.read('runtime/resolved_config.json')).capture.model_io).toBe(false);
    expect(existsSync(join(closed.root, 'runtime', 'model_calls.jsonl'))).toBe(false);
    await service?.close();
    p.cleanup();
    // the project's config.json turns it off for every agent
    const { service: t } = await serviceOver({ ...files, '.runtrail/config.json': JSON.stringify({ capture: { model_io: false } }) });
    const off = await runToEnd(t, { plugin: 'open', input: {} });
    expect(JSON.parse(off.read('runtime/resolved_config.json')).capture).toEqual({ model_io: false, max_call_bytes: 65536 });
    expect(existsSync(join(off.root, 'runtime', 'model_calls.jsonl'))).toBe(false);
  });

  it('takes limits from config.json, then the agent, then the request', async () => {
    const { service: s } = await serviceOver({
      '.runtrail/config.json': JSON.stringify({ limits: { max_iterations: 7, max_tool_calls: 9 } }),
      '.runtrail/agents/lim.md': agentFile('name: lim\ndescription: d\nmodel: script:lim.turns.json\nlimits: { max_tool_calls: 5, timeout_s: 30 }'),
      '.runtrail/agents/lim.turns.json': script([{ text: 'ok' }]),
    });
    const r = await runToEnd(s, { plugin: 'lim', input: {}, limits: { timeout_s: 20 } });
    const limits = JSON.parse(r.read('runtime/resolved_config.json')).limits as Record<string, number>;
    expect(limits).toMatchObject({ max_iterations: 7, max_tool_calls: 5, timeout_s: 20 });
  });
});
