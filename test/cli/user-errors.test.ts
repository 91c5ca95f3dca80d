/**
 * The errors a new user reads: said once, in their terms, with a suggestion for a close miss, and
 * an unusable input refused before any run exists (CLI exit 2, HTTP 400).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { runtrailMain } from '../../src/cli/runtrail-command.js';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { closestName, didYouMean } from '../../src/events/did-you-mean.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { checkPluginInput } from '../../src/runtime/plugin-input.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { postJson } from '../server/helpers.js';
import { Sink } from './sink.js';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'user-errors-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]) {
  const stdout = new Sink();
  const stderr = new Sink();
  const deps: CliDeps = {
    // no default skill: these tests are about what the user reads, not the skill folder
    agents: [{ ...createFeedbackLensPlugin(), defaultSkill: null }],
    stdout,
    stderr,
    env: { HOME: dir, PATH: '/usr/bin:/bin' },
    cwd: dir,
  };
  return runCli([...args, '--data-dir', join(dir, 'data')], deps).then((code) => ({ code, out: stdout.text, err: stderr.text }));
}

function runFolders(): string[] {
  const runs = join(dir, 'data', 'runs');
  return existsSync(runs) ? readdirSync(runs) : [];
}

function writeAgent(name: string, frontmatter: string) {
  mkdirSync(join(dir, '.runtrail', 'agents'), { recursive: true });
  writeFileSync(join(dir, '.runtrail', 'agents', `${name}.md`), `---\n${frontmatter}\n---\nDo the work.\n`);
}

describe('did you mean', () => {
  it('suggests the close name, and nothing for a different word', () => {
    expect(closestName('feedbacklense', ['chat', 'feedbacklens', 'file_summary'])).toBe('feedbacklens');
    expect(closestName('web_serach', ['web_search', 'read_file'])).toBe('web_search');
    expect(closestName('--inptu', ['--input', '--goal'])).toBe('--input');
    expect(closestName('banana', ['chat', 'feedbacklens'])).toBeNull();
    expect(didYouMean('chat', ['chat'])).toBe('');
  });
});

describe('CLI usage errors', () => {
  it('an unknown plugin gets a suggestion, said once', async () => {
    const r = await cli(['run', 'feedbacklense', '--input', 'csv_path=x.csv']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown plugin "feedbacklense" (did you mean feedbacklens?)');
    expect(r.err.match(/valid plugins/g)).toHaveLength(1);
  });

  it('an unknown flag gets a suggestion and no usage dump', async () => {
    const r = await cli(['run', 'feedbacklens', '--inptu', 'csv_path=x.csv']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown option --inptu (did you mean --input?)');
    expect(r.err).not.toContain('Usage: runtrail');
    expect(r.err.trim().split('\n')).toHaveLength(2);
  });

  it('a stray positional argument is named with what it most likely meant', async () => {
    let r = await cli(['run', 'feedbacklens', 'examples/feedback.csv']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unexpected argument examples/feedback.csv; did you mean --input csv_path=examples/feedback.csv?');
    expect(r.err).not.toContain('Commands:');
    r = await cli(['run', 'feedbacklens', 'what hurts users most']);
    expect(r.err).toContain("did you mean --goal 'what hurts users most'?");
    expect(runFolders()).toEqual([]);
  });

  it('a mistyped input key is named with the input it most likely meant, and the missing one said missing', async () => {
    const r = await cli(['run', 'feedbacklens', '--input', 'csv_pth=x.csv']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('input.csv_pth: is not an input of this agent (did you mean csv_path?)');
    expect(r.err).toContain('input.csv_path: is required and was not given');
    expect(r.err).not.toMatch(/received undefined|unknown field/);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    // a word far from every input: the inputs listed
    expect((await cli(['run', 'feedbacklens', '--input', 'csv_path=x.csv', '--input', 'colour=red'])).err).toContain(
      'input.colour: is not an input of this agent (its inputs: csv_path, product_name, max_rows)',
    );
    // an agent whose input is a JSON Schema (a Markdown agent's) reads the same
    const jsonAgent = { inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'], additionalProperties: false } };
    const checked = checkPluginInput(jsonAgent as never, { tpoic: 'cats' });
    expect(checked.ok ? [] : checked.issues).toEqual([
      { path: ['tpoic'], message: 'is not an input of this agent (did you mean topic?)' },
      { path: ['topic'], message: 'is required and was not given' },
    ]);
    expect(runFolders()).toEqual([]);
  });

  it('an unknown command gets a suggestion and the list of commands, not the usage text', async () => {
    const r = await cli(['vaildate']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown command "vaildate" (did you mean validate?)');
    expect(r.err).not.toContain('Exit codes');
  });
});

describe('an empty CSV is an input error before any run starts', () => {
  for (const [what, content, says] of [
    ['0 bytes', '', 'the CSV file is empty'],
    ['only blank lines', '\n\n  \n', 'the CSV file is empty'],
    ['a header and no rows', 'id,text,rating\n', 'the CSV has a header (id, text, rating) but no data rows'],
  ] as const) {
    it(`${what}: exit 2 naming the file, no run folder`, async () => {
      writeFileSync(join(dir, 'export.csv'), content);
      const r = await cli(['run', 'feedbacklens', '--input', 'csv_path=export.csv']);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`input.csv_path: export.csv: ${says}`);
      expect(r.err.match(new RegExp(says.replace(/[()]/g, '\\$&'), 'g'))).toHaveLength(1);
      expect(runFolders()).toEqual([]);
    });
  }

  it('a one-row CSV is analysed, not refused', async () => {
    writeFileSync(join(dir, 'one.csv'), 'id,text,rating\n1,The export to PDF crashes every time,1\n');
    const r = await cli(['run', 'feedbacklens', '--input', 'csv_path=one.csv']);
    expect(r.code, r.err).toBe(0);
  });
});

describe("a failed run says why once, in the user's words", () => {
  it('a CSV without a text column: no internal words, the reason once', async () => {
    writeFileSync(join(dir, 'numbers.csv'), 'id,score\n1,5\n2,3\n');
    const r = await cli(['run', 'feedbacklens', '--input', 'csv_path=numbers.csv']);
    expect(r.code).toBe(1);
    const all = r.out + r.err;
    expect(all).not.toMatch(/scripted failure|time\(s\)|offline:reference-v1 failed|No text\./);
    // the reason is said once: on the failed step's line; the run's error points at it
    expect(all.split('no text column found').length - 1, all).toBe(1);
    expect(r.out).toContain('✗ The feedback file cannot be analysed (read_feedback_csv, above)');
    expect(r.out).not.toMatch(/run run_\S+ \(feedbacklens\)/);
  });
});

describe('agent files', () => {
  it('an agent whose file failed to load is reported as that, not as an unknown plugin', async () => {
    writeAgent('notes', 'name: notes\ndescription: notes\ntools: [read_file, web_search]');
    const r = await cli(['run', 'notes', '--goal', 'x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('agent "notes" is not available: .runtrail/agents/notes.md failed to load: tools: unknown tool "web_search"');
    expect(r.err).not.toContain('unknown plugin');
  });

  it("the CLI's own hints are commands this shell runs (outside a checkout: the path of this runtrail)", async () => {
    writeAgent('notes', 'name: notes\ndescription: notes\ntools: [read_file, web_search]');
    const r = await cli(['run', 'notes', '--strict']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--strict stops here (node ${runtrailMain()} validate lists them)`);
    const s = await cli(['schedules', 'rm']);
    expect(s.err).toContain(`(node ${runtrailMain()} schedules list shows them)`);
  });

  it('validate reports every problem of a file in one pass, with suggestions', async () => {
    writeAgent(
      'notes',
      'name: notes\ndescription: notes\nmodle: offline\ntools: [read_file, write_artifac]\nskills: [no-such-skill]\nmcpServers: [everythin]\nlimits: { max_iterations: 0 }',
    );
    writeFileSync(join(dir, '.runtrail', 'mcp.json'), JSON.stringify({ mcpServers: { everything: { command: 'node', args: ['server.js'] } } }));
    const r = await cli(['validate']);
    expect(r.code).toBe(2);
    expect(r.out).toContain('.runtrail/agents/notes.md: modle: is not a known field (did you mean model?)');
    expect(r.out).toContain('limits.max_iterations:');
    expect(r.out).toContain('tools: unknown tool "write_artifac" (did you mean write_artifact?)');
    expect(r.out).toContain('skills: unknown skill "no-such-skill"');
    expect(r.out).toContain('mcpServers: unknown MCP server "everythin" (did you mean everything?)');
  });
});

describe('HTTP: an empty input is a 400 before any run', () => {
  let server: RunningServer | null = null;
  let service: RunService | null = null;
  afterEach(async () => {
    await server?.close();
    await service?.close();
    server = null;
    service = null;
  });

  it('POST /api/uploads refuses an empty file; POST /api/runs refuses a header-only CSV naming it', async () => {
    const dataDir = join(dir, 'data');
    service = new RunService({ dataDir, agents: [{ ...createFeedbackLensPlugin(), defaultSkill: null }], env: {} });
    server = await startServer({ service, port: 0, dataDir, env: {} });
    const fd = new FormData();
    fd.append('file', new Blob([]), 'empty.csv');
    const up = await fetch(`${server.url}/api/uploads`, { method: 'POST', body: fd });
    expect(up.status).toBe(400);
    expect(((await up.json()) as { error: { message: string } }).error.message).toContain('empty.csv is empty');

    const fd2 = new FormData();
    fd2.append('file', new Blob(['id,text\n']), 'header.csv');
    const up2 = (await (await fetch(`${server.url}/api/uploads`, { method: 'POST', body: fd2 })).json()) as { path: string };
    const created = await postJson(`${server.url}/api/runs`, { plugin: 'feedbacklens', input: { csv_path: up2.path } });
    expect(created.status).toBe(400);
    expect(JSON.stringify(created.body)).toContain('but no data rows');
    expect(runFolders()).toEqual([]);
  });
});
