/** What one `runtrail <command>` is: its name, its lines in the usage text, and what it does. */
import type { CliDeps } from './cli-io.js';

export interface CliCommand {
  /** The word after `runtrail`. */
  name: string;
  /** Its lines in the usage text's command list, each ending in a newline. */
  usage: string;
  /** The whole help of a command with subcommands (`--help` prints it); else its usage lines are shown. */
  help?: string;
  /** Runs the command on the arguments after its name; resolves to the exit code. `usage` is the whole
   *  usage text (for `--help`). Bad usage throws UsageError; the dispatcher prints it and exits 2. */
  run(args: string[], deps: CliDeps, usage: string): Promise<number> | number;
}
