/**
 * The file tools against the run's own commands, as a red team would run them: a command in the real
 * sandbox swaps a folder, and artifacts/ itself, for links to a host folder in a tight loop while the
 * tools write and read; stop validation meets a contract artifact that is a link to a host file or a
 * FIFO the run made. Nothing may land on the host, nothing of the host may be read, nothing may wait.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ArtifactContract } from '../../src/runtime/agent.js';
import { RunWorkspace } from '../../src/runtime/storage/run-workspace.js';
import { artifactContractHook, requiredOutputHook, runStopHooks } from '../../src/runtime/run/stop-validation.js';
import { resolveSandboxPolicy } from '../../src/sandbox/sandbox-policy.js';
import { sandboxSupport } from '../../src/sandbox/sandbox-support.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { createListArtifactsTool } from '../../src/tools/list-artifacts-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { createReadFileTool } from '../../src/tools/read-file-tool.js';
import { createWriteArtifactTool } from '../../src/tools/write-artifact-tool.js';

const HOST_SECRET = 'HOST-SECRET-do-not-read';
let base: string;
let host: string;
let ws: RunWorkspace;
let registry: ProcessRegistry;

beforeAll(() => {
  expect(sandboxSupport(), 'bubblewrap must be installed: npm test runs scripts/ensure-bubblewrap.mjs').toMatchObject({ ok: true });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));
afterEach(async () => {
  await registry?.shutdown();
  rmSync(base, { recursive: true, force: true });
});

async function setUp(): Promise<void> {
  base = mkdtempSync(join(tmpdir(), 'rt-ftrace-'));
  host = join(base, 'host');
  mkdirSync(host);
  writeFileSync(join(host, 'target.txt'), HOST_SECRET);
  writeFileSync(join(host, 'report.json'), JSON.stringify({ password: HOST_SECRET }));
  ws = new RunWorkspace(join(base, 'runs'), 'run_race');
  await ws.create();
  const policy = resolveSandboxPolicy(undefined, {});
  registry = new ProcessRegistry({ sandbox: policy });
  registry.sandboxScope('run_race', { policy, readOnlyInside: [ws.runtimeDir, ws.inputDir] });
}

/** A command in the run's sandbox; resolves with its output when it ends. */
function sandboxed(command: string, timeout = 120) {
  const exec = createExecTool({ registry, scopeKey: 'run_race', cwd: ws.root });
  return exec.execute({ command, timeout });
}

async function until(p: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!p()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Swaps artifacts/d (and, every few rounds, artifacts/ itself) between a real folder and a link to the host folder. */
const SWAPPER = (hostDir: string) => `
import os, shutil
os.chdir('artifacts')
os.makedirs('d.real', exist_ok=True)
open('d.real/target.txt', 'w').write('RUN-CONTENT')
os.symlink(${JSON.stringify(hostDir)}, 'd.link')
os.chdir('..')
os.symlink(${JSON.stringify(hostDir)}, 'artifacts.link')
open('swapper-started', 'w').close()
n = 0
while not os.path.exists('stop-swapper'):
    n += 1
    for pair in (('artifacts/d.real', 'artifacts/d'), ('artifacts/d', 'artifacts/d.real'), ('artifacts/d.link', 'artifacts/d'), ('artifacts/d', 'artifacts/d.link')):
        try: os.rename(*pair)
        except OSError: pass
    # a folder the tools made where d was missing: gone, so the swaps go on
    if os.path.isdir('artifacts/d') and not os.path.islink('artifacts/d'):
        shutil.rmtree('artifacts/d', ignore_errors=True)
    if n % 5 == 0:
        try:
            os.rename('artifacts', 'artifacts.real'); os.rename('artifacts.link', 'artifacts')
            os.rename('artifacts', 'artifacts.link'); os.rename('artifacts.real', 'artifacts')
        except OSError: pass
print('swaps', n)
`;

describe('the file tools while the run swaps folders for links to the host', () => {
  it('250 write_artifact and 200 read_file calls: none lands on or reads the host', async () => {
    await setUp();
    writeFileSync(join(ws.root, 'swap.py'), SWAPPER(host));
    const swapping = sandboxed('python3 swap.py');
    await until(() => existsSync(join(ws.root, 'swapper-started')));
    const write = createWriteArtifactTool({ workspace: ws, contracts: [] });
    const read = createReadFileTool({ files: ws });
    const list = createListArtifactsTool({ workspace: ws, contracts: [] });
    const outcomes = { wrote: 0, writeRefused: 0, read: 0, readRefused: 0 };
    const seen: string[] = [];
    for (let i = 0; i < 250; i++) {
      const w = await write.execute({ path: `d/out-${i}.txt`, content: `run ${i}` });
      if (w.ok) outcomes.wrote++;
      else outcomes.writeRefused++;
      if (i < 200) {
        const r = await read.execute({ path: 'artifacts/d/target.txt' });
        seen.push(r.content);
        if (r.ok) outcomes.read++;
        else outcomes.readRefused++;
      }
      if (i % 50 === 0) seen.push((await list.execute({})).content);
    }
    writeFileSync(join(ws.root, 'stop-swapper'), '');
    const swapper = await swapping;
    console.log(`race: ${JSON.stringify(outcomes)}, ${swapper.content.trim()}`);
    expect(swapper.content).toMatch(/swaps \d+/);
    // the host folder holds what it held, byte for byte
    expect(readdirSync(host).sort()).toEqual(['report.json', 'target.txt']);
    expect(readFileSync(join(host, 'target.txt'), 'utf8')).toBe(HOST_SECRET);
    for (const s of seen) expect(s).not.toContain(HOST_SECRET);
    // the swaps really raced the calls: some of each went through, some were refused
    expect(outcomes.wrote + outcomes.writeRefused).toBe(250);
    expect(outcomes.read + outcomes.readRefused).toBe(200);
    expect(Number(/swaps (\d+)/.exec(swapper.content)?.[1])).toBeGreaterThan(10);
    expect(outcomes.wrote + outcomes.read).toBeGreaterThan(0);
    expect(outcomes.writeRefused + outcomes.readRefused).toBeGreaterThan(0);
  }, 180_000);
});

describe('stop validation of what the run made of its contract artifacts', () => {
  const contract: ArtifactContract[] = [
    { path: 'report.json', type: 'json', audience: 'user', sensitivity: 'internal', description: 'r', required: true, schema: z.object({ ok: z.boolean() }) },
    { path: 'notes.md', type: 'markdown', audience: 'user', sensitivity: 'internal', description: 'n', required: true, requiredHeadings: ['Summary'] },
    { path: 'data.json', type: 'json', audience: 'user', sensitivity: 'internal', description: 'd', required: true },
  ];

  it('a link to a host file, a FIFO and a device: refused by kind at once, nothing of the host in the issues', async () => {
    await setUp();
    const made = await sandboxed(
      `ln -s ${join(host, 'report.json')} artifacts/report.json && mkfifo artifacts/notes.md && ln -s /dev/zero artifacts/data.json && ln ${join(host, 'target.txt')} artifacts/hard.txt 2>&1; ls -la artifacts`,
    );
    expect(made.content).toContain('notes.md');
    // a hard link to a host file cannot even be made from inside: the host folder is not there
    expect(existsSync(join(ws.artifactsDir, 'hard.txt'))).toBe(false);
    const started = Date.now();
    const out = await runStopHooks([requiredOutputHook(ws.root, contract), artifactContractHook(ws.root, contract)]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(out.ok).toBe(false);
    const text = JSON.stringify(out);
    expect(text).not.toContain(HOST_SECRET);
    expect(text).toContain('artifacts/report.json');
    expect(text).toMatch(/report\.json.*leads outside/);
    expect(text).toMatch(/notes\.md.*is a FIFO, not a regular file/);
    expect(text).toMatch(/data\.json.*leads outside/);
  }, 60_000);
});
