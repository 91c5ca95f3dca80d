/**
 * An agent's MCP servers in the registry: mcp.json of the user and the project (a later layer wins
 * with a warning), inline definitions, and `mcp__` tool entries checked without connecting.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { problemLine } from '../../src/extensions/definition-problem.js';
import { McpServerPool } from '../../src/mcp/mcp-server-pool.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';

let p: ProjectFixture;
let home: ProjectFixture;
afterEach(() => {
  p?.cleanup();
  home?.cleanup();
});

async function load(files: Record<string, string>, homeFiles: Record<string, string> = {}, env: Record<string, string> = {}) {
  p = makeProject(files);
  home = makeProject(homeFiles);
  return ExtensionRegistry.load({
    projectDir: p.dir,
    homeDir: home.dir,
    builtins: [],
    builtinSkillsDir: join(p.dir, 'none'),
    env,
    mcpPool: new McpServerPool(),
  });
}

const mcpJson = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers });
const agent = (extra: string) => agentFile(`name: a\ndescription: uses MCP\n${extra}`);

describe('MCP servers of an agent', () => {
  it('mcp.json of the user and of the project: the project wins, with a warning naming both files', async () => {
    const r = await load(
      { '.runtrail/mcp.json': mcpJson({ everything: { command: 'node', args: ['project.js'] } }) },
      { '.runtrail/mcp.json': mcpJson({ everything: { command: 'node', args: ['user.js'] }, docs: { url: 'http://127.0.0.1:1/mcp' } }) },
    );
    expect(r.problems.map(problemLine)).toEqual([
      '.runtrail/mcp.json: mcpServers.everything: MCP server "everything" overrides the one in ~/.runtrail/mcp.json',
    ]);
    expect([...r.mcpServers.keys()].sort()).toEqual(['docs', 'everything']);
    expect(r.mcpServers.get('everything')?.shown.args).toEqual(['project.js']);
    expect(r.mcpServers.get('docs')?.file).toBe('~/.runtrail/mcp.json');
  });

  it('an agent with a server and tool globs loads; its MCP tools become a tool source, not catalog tools', async () => {
    const r = await load({
      '.runtrail/mcp.json': mcpJson({ everything: { command: 'node' } }),
      '.runtrail/agents/a.md': agent(
        'tools: [read_file, mcp__everything__echo, "mcp__everything__get-*"]\nmcpServers: [everything]\nplan:\n  - { id: echo, title: Echo, tools: [mcp__everything__echo], done_when_tools_succeeded: [mcp__everything__get-sum] }',
      ),
    });
    expect(r.problems).toEqual([]);
    const a = r.get('a')!;
    expect(typeof a.createToolSources).toBe('function');
  });

  it('inline definitions in the frontmatter', async () => {
    const r = await load(
      {
        '.runtrail/agents/a.md': agent(
          'tools: ["mcp__docs__*"]\nmcpServers:\n  - docs: { type: http, url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer ${T}" } }',
        ),
      },
      {},
      { T: 'x' },
    );
    expect(r.problems).toEqual([]);
    expect(r.get('a')).toBeDefined();
  });

  it('validate: unknown servers, entries that name no server of the agent, malformed entries, bad inline definitions', async () => {
    const r = await load({
      '.runtrail/mcp.json': mcpJson({ everything: { command: 'node' } }),
      '.runtrail/agents/a.md': agent('tools: [mcp__docs__search, mcp__everything, "mcp__everything__*"]\nmcpServers: [everything, nowhere]'),
      '.runtrail/agents/b.md': agentFile('name: b\ndescription: inline\ntools: ["mcp__x__*"]\nmcpServers:\n  - x: { type: http }'),
      '.runtrail/agents/c.md': agentFile('name: c\ndescription: lists a server but grants nothing\nmcpServers: [everything]'),
    });
    expect(r.problems.map((x) => `${x.level}: ${problemLine(x)}`)).toEqual([
      'error: .runtrail/agents/a.md: mcpServers[1]: unknown MCP server "nowhere" (configured: everything; define it in .runtrail/mcp.json or inline)',
      'error: .runtrail/agents/a.md: tools: "mcp__docs__search" names MCP server "docs", which is not in mcpServers (everything); add it there',
      'error: .runtrail/agents/a.md: tools: "mcp__everything" must be mcp__<server>__<tool or glob>, e.g. mcp__everything__* or mcp__everything__echo',
      'error: .runtrail/agents/b.md: mcpServers[0].x: an http server needs "url"',
      'error: .runtrail/agents/b.md: tools: "mcp__x__*" names MCP server "x", which is not in mcpServers (empty); add it there',
      'warning: .runtrail/agents/c.md: mcpServers[0]: no tools: entry grants the tools of "everything" (add mcp__everything__* or name its tools)',
    ]);
    expect(r.names()).toEqual(['c']);
  });

  it('a broken mcp.json is a problem of its own; agents that do not use it still load', async () => {
    const r = await load({ '.runtrail/mcp.json': '{ "mcpServers": { "x": ', '.runtrail/agents/a.md': agent('tools: [read_file]') });
    expect(r.problems.map(problemLine)[0]).toMatch(/^\.runtrail\/mcp\.json: is not valid JSON: /);
    expect(r.names()).toEqual(['a']);
  });
});
