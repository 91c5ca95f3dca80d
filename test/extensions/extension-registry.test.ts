import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { problemLine } from '../../src/extensions/definition-problem.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import { agentFile, makeProject, NOTES_AGENT, type ProjectFixture } from './project-fixture.js';

const fixtures: ProjectFixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});
function project(files: Record<string, string>) {
  const p = makeProject(files);
  fixtures.push(p);
  return p;
}
const builtin = createTextOnlyPlugin({ name: 'chat', description: 'the builtin chat', offlineAnswer: 'hi' });
const load = (projectDir: string, homeDir?: string) =>
  ExtensionRegistry.load({ projectDir, ...(homeDir ? { homeDir } : {}), builtins: [builtin], builtinSkillsDir: join(projectDir, 'no-builtin-skills') });
const lines = (r: ExtensionRegistry, level: 'error' | 'warning' = 'error') => r.problems.filter((p) => p.level === level).map(problemLine);

const WORD_PLUGIN = `export default {
  name: 'text-tools',
  tools: [{
    name: 'count_words',
    description: 'Count the words of a text',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    async execute(args, ctx) { return { ok: true, content: String(args.text.split(/\\s+/).filter(Boolean).length) + ' in ' + ctx.runId }; },
  }],
};
`;

describe('ExtensionRegistry', () => {
  it('loads the builtins first, then the user layer, then the project; a clash is a warning naming both files', async () => {
    const home = project({
      '.runtrail/agents/notes.md': NOTES_AGENT.replace('Write notes from the input', 'the user notes'),
      '.runtrail/agents/chat.md': agentFile('name: chat\ndescription: the user chat'),
    });
    const p = project({ '.runtrail/agents/notes.md': NOTES_AGENT });
    const r = await load(p.dir, home.dir);
    expect(r.names()).toEqual(['chat', 'notes']);
    expect(r.get('notes')!.description).toBe('Write notes from the input');
    expect(r.get('chat')!.description).toBe('the user chat');
    expect(r.entries().map((e) => [e.agent.name, e.source.kind, e.source.file])).toEqual([
      ['chat', 'user', '~/.runtrail/agents/chat.md'],
      ['notes', 'project', '.runtrail/agents/notes.md'],
    ]);
    expect(lines(r, 'warning')).toEqual([
      '~/.runtrail/agents/chat.md: name: agent "chat" overrides the one in the builtins',
      '.runtrail/agents/notes.md: name: agent "notes" overrides the one in ~/.runtrail/agents/notes.md',
    ]);
    expect(lines(r)).toEqual([]);
  });

  it('one broken file never stops the others from loading', async () => {
    const p = project({
      '.runtrail/agents/good.md': agentFile('name: good\ndescription: fine'),
      '.runtrail/agents/bad-yaml.md': '---\nname: [oops\n---\n',
      '.runtrail/agents/unknown-tool.md': agentFile('name: unknown-tool\ndescription: d\ntools: [read_file, teleport]'),
      '.runtrail/agents/unknown-skill.md': agentFile('name: unknown-skill\ndescription: d\nskills: [nowhere]'),
      '.runtrail/plugins/throws.mjs': 'throw new Error("boom at import");\n',
      '.runtrail/plugins/empty.mjs': 'export const x = 1;\n',
      '.runtrail/plugins/words.mjs': WORD_PLUGIN,
    });
    const r = await load(p.dir);
    expect(r.names()).toEqual(['chat', 'good']);
    expect(r.tools.has('count_words')).toBe(true);
    const errs = lines(r);
    expect(errs).toContain('.runtrail/plugins/throws.mjs: failed to load: boom at import');
    expect(errs).toContain('.runtrail/plugins/empty.mjs: exports nothing: a plugin file needs `export default { name, tools }` (or definePlugin({...}))');
    expect(errs.find((l) => l.startsWith('.runtrail/agents/bad-yaml.md: frontmatter is not valid YAML'))).toBeTruthy();
    expect(errs.find((l) => l.startsWith('.runtrail/agents/unknown-tool.md: tools: unknown tool "teleport" (available: '))).toContain('count_words');
    expect(errs.find((l) => l.startsWith('.runtrail/agents/unknown-skill.md: skills: unknown skill "nowhere"'))).toBeTruthy();
  });

  it('refuses a second agent of the same name in one layer, naming both files', async () => {
    const p = project({
      '.runtrail/agents/dup.md': agentFile('name: dup\ndescription: from the file'),
      '.runtrail/plugins/agents.mjs': `export default { name: 'p', agents: [{ name: 'dup', description: 'from the plugin', inputSchema: { type: 'object' }, createTools: () => [] }] };\n`,
    });
    const r = await load(p.dir);
    expect(r.get('dup')!.description).toBe('from the plugin');
    expect(lines(r)).toEqual([
      '.runtrail/agents/dup.md: name: agent "dup" is already defined in .runtrail/plugins/agents.mjs; this one is not loaded (rename one of them)',
    ]);
  });

  it('loads TypeScript plugins with jiti, refuses a broken tool alone and a clash with a builtin tool', async () => {
    const p = project({
      '.runtrail/plugins/tools.ts': `import { definePlugin, defineTool } from 'runtrail';
const upper = defineTool<{ text: string }>({ name: 'upper', description: 'Upper-case a text', parameters: { type: 'object', properties: { text: { type: 'string' } } }, execute: (a) => a.text.toUpperCase() });
export default definePlugin({ name: 'ts-tools', tools: [upper, { name: 'no-exec', description: 'broken' }, { name: 'read_file', description: 'mine', execute: () => 'x' }, { name: 'bad schema', description: 'x', execute: () => 'x' }] });
`,
    });
    const r = await load(p.dir);
    expect(r.tools.has('upper')).toBe(true);
    expect(r.tools.get('read_file')!.source).toBe('builtin');
    expect(lines(r)).toEqual([
      '.runtrail/plugins/tools.ts: tools[1] (no-exec).execute: must be a function (args, ctx) => result',
      '.runtrail/plugins/tools.ts: tools[3].name: must be 1–64 letters, digits, _ or -, got "bad schema"',
      '.runtrail/plugins/tools.ts: tools (read_file): clashes with the builtin tool "read_file"; the plugin\'s tool is not loaded (rename it)',
    ]);
  });

  it('reads config.json: model, limits, plugins (paths or npm packages) and disable', async () => {
    const p = project({
      '.runtrail/config.json': JSON.stringify({
        model: 'script:turns.json',
        limits: { max_iterations: 5 },
        disable: ['chat'],
        plugins: ['./lib/words.mjs', 'no-such-package-xyz'],
      }),
      '.runtrail/lib/words.mjs': WORD_PLUGIN,
    });
    const r = await load(p.dir);
    expect(r.config).toMatchObject({ model: 'script:turns.json', limits: { max_iterations: 5 } });
    expect(r.names()).toEqual([]);
    expect(r.tools.get('count_words')!.source).toBe('.runtrail/lib/words.mjs');
    expect(lines(r)).toEqual([expect.stringMatching(/^\.runtrail\/config\.json: plugins: npm package "no-such-package-xyz" not found from /)]);
  });

  it('names the field of a bad capture setting in config.json and in an agent', async () => {
    const p = project({
      '.runtrail/config.json': JSON.stringify({ capture: { model_io: 'no', max_call_bytes: 10 } }),
      '.runtrail/agents/a.md': '---\nname: a\ndescription: d\ncapture: { modelio: false }\n---\nbody\n',
    });
    expect(lines(await load(p.dir)).sort()).toEqual([
      '.runtrail/agents/a.md: capture.modelio: is not a known field',
      '.runtrail/config.json: capture.max_call_bytes: must be >= 16384',
      '.runtrail/config.json: capture.model_io: must be boolean',
    ]);
  });

  it('names the field of a bad config.json', async () => {
    const p = project({ '.runtrail/config.json': JSON.stringify({ limits: { max_iterations: 0 }, plugin: [] }) });
    expect(lines(await load(p.dir)).sort()).toEqual([
      '.runtrail/config.json: limits.max_iterations: must be >= 1',
      '.runtrail/config.json: plugin: is not a known field',
    ]);
    const q = project({ '.runtrail/config.json': '{ nope' });
    expect(lines(await load(q.dir))[0]).toMatch(/^\.runtrail\/config\.json: is not valid JSON: /);
  });

  it("reads config.json: the server's http limits, upload quota and how far requests may raise limits; names a bad one", async () => {
    const p = project({
      '.runtrail/config.json': JSON.stringify({
        request_limits: { max_tool_calls: 500 },
        http: { headers_timeout_s: 10, max_connections_per_client: 16 },
        uploads: { max_files_per_client: 20, max_age_s: 3600 },
      }),
    });
    const r = await load(p.dir);
    expect(lines(r)).toEqual([]);
    expect(r.config).toMatchObject({
      request_limits: { max_tool_calls: 500 },
      http: { headers_timeout_s: 10, max_connections_per_client: 16 },
      uploads: { max_files_per_client: 20, max_age_s: 3600 },
    });
    const q = project({ '.runtrail/config.json': JSON.stringify({ http: { max_connections: 0, keepalive_s: 5 }, uploads: { max_age_s: -1 } }) });
    expect(lines(await load(q.dir)).sort()).toEqual([
      '.runtrail/config.json: http.keepalive_s: is not a known field',
      '.runtrail/config.json: http.max_connections: must be >= 1',
      '.runtrail/config.json: uploads.max_age_s: must be > 0',
    ]);
  });

  it('refuses an agent that lists itself or an unknown agent among its subagents', async () => {
    const p = project({
      '.runtrail/agents/lead.md': agentFile('name: lead\ndescription: d\nagents: [helper]'),
      '.runtrail/agents/helper.md': agentFile('name: helper\ndescription: d'),
      '.runtrail/agents/narcissus.md': agentFile('name: narcissus\ndescription: d\nagents: [narcissus]'),
      '.runtrail/agents/lonely.md': agentFile('name: lonely\ndescription: d\nagents: [nobody]'),
    });
    const r = await load(p.dir);
    expect(r.names()).toEqual(['chat', 'helper', 'lead']);
    expect(r.get('lead')!.agents).toEqual(['helper']);
    expect(lines(r).sort()).toEqual([
      '.runtrail/agents/lonely.md: agents: unknown agent "nobody" (agents: chat, helper, lead, lonely, narcissus); lonely is not loaded',
      '.runtrail/agents/narcissus.md: agents: lists itself: an agent cannot start itself; narcissus is not loaded',
    ]);
  });

  it('checks Agent Skills of the project: a missing description refuses, capitals warn', async () => {
    const p = project({
      '.runtrail/skills/house-style/SKILL.md': '---\nname: house-style\ndescription: How we write\n---\nShort.\n',
      '.runtrail/skills/Loud/SKILL.md': '---\nname: Loud\ndescription: Capitals\n---\nLOUD.\n',
      '.runtrail/skills/mute/SKILL.md': '---\nname: mute\n---\nno description\n',
      '.runtrail/agents/styled.md': agentFile('name: styled\ndescription: d\nskills: [house-style, Loud]'),
      '.runtrail/agents/muted.md': agentFile('name: muted\ndescription: d\nskills: [mute]'),
    });
    const r = await load(p.dir);
    expect(r.names()).toEqual(['chat', 'styled']);
    expect(lines(r, 'warning')).toContain('.runtrail/skills/Loud/SKILL.md: name: "Loud" should use lowercase letters, digits and hyphens only');
    expect(lines(r)).toEqual([
      '.runtrail/skills/mute: description: is required: say what the skill does and when to use it',
      expect.stringMatching(/^\.runtrail\/agents\/muted\.md: skills: skill "mute" cannot be loaded: .*description: is required/),
    ]);
  });
});
