/** MCP test servers: the reference servers from node_modules (no npx, no network) and bad ones of our own. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseServerDefinition, type McpConfigProblem, type McpServerConfig } from '../../src/mcp/mcp-config.js';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { eventually, liveProcesses } from '../tools/helpers.js';

const ROOT = runtrailPackageRoot();
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const NODE = process.execPath;

/** A definition as mcp.json would give it (checked like one); throws on problems so a test sees them. */
export function serverConfig(
  name: string,
  def: Record<string, unknown>,
  env: Record<string, string | undefined> = process.env,
  baseDir = ROOT,
): McpServerConfig {
  const problems: McpConfigProblem[] = [];
  const cfg = parseServerDefinition(name, def, { file: '.runtrail/mcp.json', at: 'mcpServers', env, baseDir }, problems);
  const errors = problems.filter((p) => p.level === 'error' && !cfg?.unusable);
  if (!cfg || errors.length) throw new Error(`bad test definition: ${JSON.stringify(problems)}`);
  return cfg;
}

/** server-everything over stdio; `marker` goes on its command line so the process table can be searched. */
export function everythingStdio(marker: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: NODE, args: [EVERYTHING, 'stdio', `--marker=${marker}`], ...extra };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface HttpServer {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything in `streamableHttp` (…/mcp) or `sse` (…/sse) mode on a loopback port. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse', marker: string): Promise<HttpServer> {
  const port = await freePort();
  const child = spawn(NODE, [EVERYTHING, mode, `--marker=${marker}`], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const up = await eventually(() => /listening on port|running on port/i.test(out) || child.exitCode !== null, 20_000);
  if (!up || child.exitCode !== null) throw new Error(`server-everything ${mode} did not start: ${out}`);
  return {
    url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`,
    port,
    child,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('close', () => r());
        child.kill('SIGKILL');
      }),
  };
}

/** The marker's processes that still run (zombies excluded), without the test's own `ps`. */
export function serverProcesses(marker: string): string[] {
  return liveProcesses(marker);
}

export function fixture(name: string): string {
  return join(FIXTURES, name);
}
