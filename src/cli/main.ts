#!/usr/bin/env node
/** `runtrail` entry: wires the real process (stdio, env, Ctrl-C, agents, server) into runCli. */
import { createInterface } from 'node:readline/promises';
import { EXIT, type CliDeps } from './cli-io.js';
import { defaultSkillsDir } from '../runtime/package-root.js';
import { maskSecrets, registerEnvSecrets } from '../events/secret-masker.js';
import { terminalSafe } from '../events/terminal-safe-text.js';
import { cliPlugins } from './cli-plugins.js';
import { runCli } from './run-cli.js';
import { safeOut } from './safe-output.js';
import { serveProject } from './serve-project.js';

// the keys and tokens of this environment are masked in everything the CLI prints and writes
registerEnvSecrets(process.env);
// runCli cleans what commands print; what main itself prints (the server's lines, a crash) is cleaned here
const stdout = process.stdout;
const stderr = safeOut(process.stderr);

async function main(): Promise<number> {
  const agents = await cliPlugins(defaultSkillsDir(), { shellTask: true });
  const deps: CliDeps = {
    agents,
    stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    async ask(question) {
      if (!process.stdin.isTTY) return null;
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        // the question quotes a tool call's arguments: the model's text
        return await rl.question(terminalSafe(maskSecrets(question)));
      } finally {
        rl.close();
      }
    },
    onInterrupt(handler) {
      let count = 0;
      const onSig = () => {
        count++;
        // a second Ctrl-C while cancelling means "stop now"
        if (count > 1) process.exit(EXIT.cancelled);
        handler();
      };
      process.on('SIGINT', onSig);
      process.on('SIGTERM', onSig);
      return () => {
        process.off('SIGINT', onSig);
        process.off('SIGTERM', onSig);
      };
    },
    serve: (opts) => serveProject(opts, { stderr }),
  };
  return runCli(process.argv.slice(2), deps);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    stderr.write(`runtrail: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = EXIT.failed;
  },
);
