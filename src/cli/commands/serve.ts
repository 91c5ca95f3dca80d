/** `runtrail serve`: the HTTP server and the web page over the project, until Ctrl-C. */
import { ClusterConfigError } from '../../distributed/cluster-settings.js';
import { ServiceUnavailableError } from '../../distributed/service-url.js';
import { defaultSkillsDir } from '../../runtime/package-root.js';
import { ServerConfigError } from '../../server/server-config-error.js';
import { intOpt, parse } from '../args.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { dataDirOf, projectDirOf } from '../project-context.js';

export const serveCommand: CliCommand = {
  name: 'serve',
  usage: `  serve               start the HTTP server and web page: --host H, --port N, --watch (reload
                      agents, skills and plugins for the next run when their files change),
                      --concurrency N (runs at once, default 4), --drain-s N (on Ctrl-C or
                      SIGTERM, the tool calls in flight get N s to finish before their runs are
                      left to be resumed at the next start, default 10); with RUNTRAIL_REDIS_URL and
                      RUNTRAIL_DATABASE_URL set: --role api|worker|all (default all)
`,
  run: (args, deps) => serve(args, deps, false),
};

/** `serve`, or (`worker`) a node that only claims and runs queued runs. */
export async function serve(args: string[], deps: CliDeps, worker: boolean): Promise<number> {
  const { values } = parse(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    watch: { type: 'boolean' },
    role: { type: 'string' },
    concurrency: { type: 'string' },
    'drain-s': { type: 'string' },
  });
  if (!deps.serve) throw new UsageError('serve is not available in this build');
  const role = worker ? 'worker' : (values.role ?? 'all');
  if (role !== 'api' && role !== 'worker' && role !== 'all') throw new UsageError(`--role must be api, worker or all, got ${JSON.stringify(role)}`);
  if (worker && values.role !== undefined) throw new UsageError('worker takes no --role (it is serve --role worker)');
  const port = intOpt(values, 'port', 0);
  const concurrency = intOpt(values, 'concurrency', 1);
  const drainS = intOpt(values, 'drain-s', 0);
  const projectDir = projectDirOf(values, deps);
  let server;
  try {
    server = await deps.serve({
      dataDir: dataDirOf(values, deps, projectDir),
      projectDir,
      watch: values.watch === true,
      strict: values.strict === true,
      role,
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(drainS !== undefined ? { drainS } : {}),
      ...(typeof values.host === 'string' ? { host: values.host } : {}),
      ...(port !== undefined ? { port } : {}),
      skillsDir: deps.skillsDir ?? defaultSkillsDir(),
      env: deps.env,
    });
  } catch (e) {
    // a service that cannot be reached, its variables set wrong, or a server that must not start so: say which, exit 2
    if (e instanceof ClusterConfigError || e instanceof ServiceUnavailableError || e instanceof ServerConfigError) {
      deps.stderr.write(`runtrail: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
  deps.stdout.write(`${server.describe ?? `runtrail serving on ${server.url}`} (Ctrl-C to stop)\n`);
  // the handler stays until the server is closed: were it removed on the signal itself, the child-process
  // signal bridge (MCP servers, background sessions) would find itself the only listener and re-raise it
  let off: (() => void) | undefined;
  await new Promise<void>((resolveStop) => {
    off = deps.onInterrupt?.(() => resolveStop());
    if (!deps.onInterrupt) resolveStop();
  });
  await server.close();
  off?.();
  return EXIT.ok;
}
