/**
 * The `runtrail` dispatcher: finds the command (commands/index.ts) and turns what it throws into the
 * message and exit code a user reads. Exit 0 completed, 1 failed, 2 bad usage or input, 130 cancelled.
 */
import { RunRequestError } from '../runtime/run-request-error.js';
import { EXIT, UsageError, type CliDeps } from './cli-io.js';
import { COMMANDS } from './commands/index.js';
import { stopMcp } from './mcp-lifecycle.js';
import { StrictError } from './project-context.js';

export const USAGE = `Usage: runtrail <command> [options]

Commands:
${COMMANDS.map((c) => c.usage).join('')}
Every command takes --project DIR (default RUNTRAIL_PROJECT or the working folder: definitions in
DIR/.runtrail and ~/.runtrail), --data-dir DIR (default RUNTRAIL_DATA_DIR or DIR/.runtrail) and
--strict (a broken definition stops the command instead of being skipped with a warning).
Exit codes: 0 completed, 1 failed, 2 bad usage or input, 130 cancelled.
`;

const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
      deps.stdout.write(USAGE);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    const command = BY_NAME.get(name);
    if (!command) throw new UsageError(`unknown command "${name}"`);
    return await command.run(rest, deps, USAGE);
  } catch (e) {
    return reportFailure(e, deps);
  } finally {
    // the MCP servers this command started: SIGTERM to each group, SIGKILL after the grace
    await stopMcp();
  }
}

/** What a command threw, said once in the user's words; the exit code for it. */
function reportFailure(e: unknown, deps: CliDeps): number {
  if (e instanceof UsageError) {
    deps.stderr.write(`runtrail: ${e.message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (e instanceof StrictError) {
    deps.stderr.write(`runtrail: ${e.message}\n`);
    return EXIT.usage;
  }
  if (e instanceof RunRequestError) {
    deps.stderr.write(`runtrail: ${e.message}\n`);
    for (const i of e.details.issues ?? []) deps.stderr.write(`  - ${i.path}: ${i.message}\n`);
    if (e.details.validPlugins) deps.stderr.write(`  valid plugins: ${e.details.validPlugins.join(', ')}\n`);
    return e.code === 'not_found' || e.code === 'wrong_state' ? EXIT.failed : EXIT.usage;
  }
  deps.stderr.write(`runtrail: ${(e as Error)?.stack ?? String(e)}\n`);
  return EXIT.failed;
}
