#!/usr/bin/env node
/** `runtrail` entry: wires the real process (stdio, env, Ctrl-C, plugins, server) into runCli. */
import { RunService } from '../runtime/run-service.js';
import { EXIT, type CliDeps } from './cli-io.js';
import { defaultSkillsDir } from '../runtime/package-root.js';
import { cliPlugins } from './cli-plugins.js';
import { runCli } from './run-cli.js';

async function main(): Promise<number> {
  const plugins = await cliPlugins(defaultSkillsDir(), { shellTask: true });
  const deps: CliDeps = {
    plugins,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
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
    async serve(opts) {
      const { startServer } = await import('../server/start-server.js');
      const plugins = await cliPlugins(opts.skillsDir ?? defaultSkillsDir(), { shellTask: opts.env.RUNTRAIL_ENABLE_SHELL_TASK === '1' });
      const service = new RunService({ dataDir: opts.dataDir, plugins, ...(opts.skillsDir ? { skillsDir: opts.skillsDir } : {}), env: opts.env });
      await service.init();
      try {
        const server = await startServer({ service, plugins, dataDir: opts.dataDir, ...(opts.skillsDir ? { skillsDir: opts.skillsDir } : {}), host: opts.host, port: opts.port, env: opts.env });
        return {
          url: server.url,
          close: async () => {
            await server.close();
            await service.close();
          },
        };
      } catch (e) {
        await service.close();
        throw e;
      }
    },
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
