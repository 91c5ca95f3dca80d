/**
 * The CLI's and the server's part in the MCP servers' lifecycle: stdio servers are recorded under
 * `<dataDir>/mcp/` while they run, the servers a SIGKILLed Runtrail left on that data dir are ended
 * when the next one starts, and every server is stopped when the command (or the server) ends.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtensionRegistry } from '../extensions/extension-registry.js';
import { sharedMcpPool, type McpServerPool } from '../mcp/mcp-server-pool.js';
import type { CliOut } from './cli-io.js';

export function mcpLedgerDir(dataDir: string): string {
  return join(dataDir, 'mcp');
}

/** Records servers under the data dir and ends a dead Runtrail's leftovers there (saying so on `stderr`). */
export async function prepareMcp(registry: Pick<ExtensionRegistry, 'mcpPool'>, dataDir: string, stderr?: CliOut): Promise<void> {
  const dir = mcpLedgerDir(dataDir);
  registry.mcpPool.useLedgerDir(dir);
  if (!existsSync(dir)) return;
  const { ended, commands } = await registry.mcpPool.endLeftovers();
  if (ended && stderr)
    stderr.write(
      `runtrail: ended ${ended} MCP server process${ended === 1 ? '' : 'es'} a stopped Runtrail left running (${commands.map((c) => (c.length > 80 ? `${c.slice(0, 79)}…` : c)).join('; ')})\n`,
    );
}

/** Stops the servers (SIGTERM to each group, SIGKILL after the grace) when any runs. */
export async function stopMcp(pool: McpServerPool = sharedMcpPool()): Promise<void> {
  if (pool.active) await pool.shutdown();
}
