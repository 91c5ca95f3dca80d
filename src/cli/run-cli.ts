/**
 * The `runtrail` dispatcher: finds the command (commands/index.ts) and turns what it throws into the
 * message and exit code a user reads. Exit 0 completed, 1 failed, 2 bad usage or input, 130 cancelled.
 */
import { didYouMean } from '../events/did-you-mean.js';
import { RunRequestError } from '../runtime/run-request-error.js';
import { EXIT, UsageError, type CliDeps } from './cli-io.js';
import type { CliCommand } from './cli-command.js';
import { COMMANDS } from './commands/index.js';
import { stopMcp } from './mcp-lifecycle.js';
import { StrictError } from './project-context.js';
import { runtrailCommand } from './runtrail-command.js';
import { safeOut } from './safe-output.js';

export const USAGE = `Usage: runtrail <command> [options]

Commands:
${COMMANDS.map((c) => c.usage).join('')}
Every command takes --project DIR (default RUNTRAIL_PROJECT or the working folder: definitions in
DIR/.runtrail and ~/.runtrail), --data-dir DIR (default RUNTRAIL_DATA_DIR or DIR/.runtrail) and
--strict (a broken definition stops the command instead of being skipped with a warning).
Exit codes: 0 completed, 1 failed, 2 bad usage or input, 130 cancelled.
`;

const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

/** One command's help: its lines of the usage text and the options every command takes. */
function commandHelp(c: CliCommand): string {
  return (
    c.help ??
    `Usage: runtrail ${c.name} [options]\n\n${c.usage}\nEvery command also takes --project DIR, --data-dir DIR and --strict (runtrail --help says more).\n`
  );
}

/** `--help`/`-h` among a command's arguments (before a `--`). */
function wantsHelp(args: string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

export async function runCli(argv: string[], given: CliDeps): Promise<number> {
  // everything a command prints is masked and made safe for a terminal, in one place
  const deps: CliDeps = { ...given, stdout: safeOut(given.stdout), stderr: safeOut(given.stderr) };
  const [name, ...rest] = argv;
  let command: CliCommand | undefined;
  try {
    if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && rest.length === 0)) {
      deps.stdout.write(USAGE);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === 'help') {
      const c = BY_NAME.get(rest[0]);
      if (!c) throw new UsageError(`unknown command "${rest[0]}"${didYouMean(rest[0], BY_NAME.keys())}; commands: ${[...BY_NAME.keys()].join(', ')}`);
      deps.stdout.write(commandHelp(c));
      return EXIT.ok;
    }
    command = BY_NAME.get(name);
    if (!command) throw new UsageError(`unknown command "${name}"${didYouMean(name, BY_NAME.keys())}; commands: ${[...BY_NAME.keys()].join(', ')}`);
    if (wantsHelp(rest)) {
      deps.stdout.write(commandHelp(command));
      return EXIT.ok;
    }
    return await command.run(rest, deps, USAGE);
  } catch (e) {
    return reportFailure(e, deps, command);
  } finally {
    // the MCP servers this command started: SIGTERM to each group, SIGKILL after the grace
    await stopMcp();
  }
}

/** What a command threw, said once in the user's words; the exit code for it. */
function reportFailure(e: unknown, deps: CliDeps, command: CliCommand | undefined): number {
  if (e instanceof UsageError) {
    // the message and where to read more, not the whole usage text
    const help = `${runtrailCommand(deps.cwd, deps.env)} ${command ? `${command.name} --help` : '--help'}`;
    deps.stderr.write(`runtrail: ${e.message}\n(${help} lists the options)\n`);
    return EXIT.usage;
  }
  if (e instanceof StrictError) {
    deps.stderr.write(`runtrail: ${e.message}\n`);
    return EXIT.usage;
  }
  if (e instanceof RunRequestError) {
    deps.stderr.write(`runtrail: ${e.message}\n`);
    // an issue the message does not already say (most messages name every issue)
    for (const i of e.details.issues ?? []) if (!e.message.includes(i.message)) deps.stderr.write(`  - ${i.path}: ${i.message}\n`);
    return e.code === 'not_found' || e.code === 'wrong_state' ? EXIT.failed : EXIT.usage;
  }
  deps.stderr.write(`runtrail: ${(e as Error)?.stack ?? String(e)}\n`);
  return EXIT.failed;
}
