/**
 * `runtrail serve`: a RunService over the project's registry and the HTTP server in front of it;
 * with --watch, agents, skills and plugins are re-read for the next run when their files change.
 */
import { join } from 'node:path';
import { watchProject } from '../extensions/project-watcher.js';
import { defaultSkillsDir } from '../runtime/package-root.js';
import { LivePluginSource } from '../runtime/plugin-registry.js';
import { RunService } from '../runtime/run-service.js';
import type { CliOut, ServeOptions } from './cli-io.js';
import { cliPlugins } from './cli-plugins.js';
import { loadRegistry, reportProblems } from './project-context.js';
import { prepareMcp, stopMcp } from './mcp-lifecycle.js';
import { cliTelemetry, finishTelemetry } from './cli-telemetry.js';

export async function serveProject(opts: ServeOptions, io: { stderr: CliOut }): Promise<{ url: string; close(): Promise<void> }> {
  const { startServer } = await import('../server/start-server.js');
  const skillsDir = opts.skillsDir ?? defaultSkillsDir();
  // shell_task hands whoever reaches the API a shell: offered only when asked for
  const builtins = await cliPlugins(skillsDir, { shellTask: opts.env.RUNTRAIL_ENABLE_SHELL_TASK === '1' });
  const load = () => loadRegistry(opts.projectDir, { env: opts.env, plugins: builtins, skillsDir });
  let registry = await load();
  reportProblems(registry, io, opts.strict === true);
  await prepareMcp(registry, opts.dataDir, io.stderr);
  const source = new LivePluginSource(registry);
  // traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set: batched, exported within about a second and at shutdown
  const telemetry = await cliTelemetry(opts.env, io.stderr, { announce: true });
  const service = new RunService({
    dataDir: opts.dataDir,
    pluginSource: source,
    skillDirs: registry.skillDirs,
    defaults: () => registry.config,
    skillsDir,
    env: opts.env,
    ...(telemetry ? { observers: [telemetry.observer] } : {}),
  });
  await service.init();
  const roots = [join(opts.projectDir, '.runtrail'), ...(opts.env.HOME ? [join(opts.env.HOME, '.runtrail')] : [])];
  const watcher = opts.watch
    ? watchProject(roots, async () => {
        const next = await load();
        reportProblems(next, io, false);
        registry = next;
        source.replace(next);
        io.stderr.write(`runtrail: definitions reloaded (${next.names().length} agents)\n`);
      })
    : null;
  try {
    const server = await startServer({ service, dataDir: opts.dataDir, skillsDir, host: opts.host, port: opts.port, env: opts.env });
    return {
      url: server.url,
      close: async () => {
        watcher?.close();
        await server.close();
        await service.close();
        await stopMcp(registry.mcpPool);
        await finishTelemetry(telemetry, io.stderr);
      },
    };
  } catch (e) {
    watcher?.close();
    await service.close();
    await stopMcp(registry.mcpPool);
    await finishTelemetry(telemetry, io.stderr);
    throw e;
  }
}
