/**
 * Every `runtrail` command, in the order the usage text lists them. A new command is a file in this
 * folder exporting a CliCommand, and one line here.
 */
import type { CliCommand } from '../cli-command.js';
import { agentsCommand } from './agents.js';
import { auditCommand } from './audit.js';
import { keysCommand } from './keys.js';
import { loginCommand } from './login.js';
import { tenantsCommand } from './tenants.js';
import { usersCommand } from './users.js';
import { channelsCommand } from './channels.js';
import { doctorCommand } from './doctor.js';
import { initCommand } from './init.js';
import { mcpCommand } from './mcp.js';
import { pluginsCommand } from './plugins.js';
import { replayCommand } from './replay.js';
import { resumeCommand } from './resume.js';
import { runCommand } from './run.js';
import { runsCommand } from './runs.js';
import { sandboxCommand } from './sandbox.js';
import { schedulesCommand } from './schedules.js';
import { serveCommand } from './serve.js';
import { showCommand } from './show.js';
import { skillsCommand } from './skills.js';
import { startCommand } from './start.js';
import { validateCommand } from './validate.js';
import { workerCommand } from './worker.js';

export const COMMANDS: readonly CliCommand[] = [
  runCommand,
  runsCommand,
  resumeCommand,
  showCommand,
  replayCommand,
  agentsCommand,
  pluginsCommand,
  skillsCommand,
  validateCommand,
  initCommand,
  startCommand,
  serveCommand,
  workerCommand,
  doctorCommand,
  sandboxCommand,
  mcpCommand,
  channelsCommand,
  schedulesCommand,
  tenantsCommand,
  usersCommand,
  keysCommand,
  auditCommand,
  loginCommand,
];
