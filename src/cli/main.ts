#!/usr/bin/env node
/** `runtrail` entry: wires the real process (stdio, env, Ctrl-C, plugins, server) into runCli. */
import { createInterface } from 'node:readline/promises';
import { EXIT, type CliDeps } from './cli-io.js';
import { defaultSkillsDir } from '../runtime/package-root.js';
import { cliPlugins } from './cli-plugins.js';
import { runCli } from './run-cli.js';
import { serveProject } from './serve-project.js';

async function main(): Promise<number> {
  const plugins = await cliPlugins(defaultSkillsDir(), { shellTask: true });
  const deps: CliDeps = {
    plugins,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    async ask(question) {
      if (!process.stdin.isTTY) return null;
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
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
    serve: (opts) => serveProject(opts, { stderr: process.stderr }),
  };
  return runCli(process.argv.slice(2), deps);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`runtrail: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = EXIT.failed;
  },
);
