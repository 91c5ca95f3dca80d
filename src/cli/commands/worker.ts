/** `runtrail worker`: a node of several that only claims and runs queued runs (`serve --role worker`). */
import type { CliCommand } from '../cli-command.js';
import { serve } from './serve.js';

export const workerCommand: CliCommand = {
  name: 'worker',
  usage: `  worker              several nodes: claim and run queued runs (serve --role worker):
                      --concurrency N (default 4), --drain-s N (on SIGTERM, let runs finish for
                      N s, default 60, then leave them to another worker to resume, or interrupt
                      those that cannot be resumed)
`,
  run: (args, deps) => serve(args, deps, true),
};
