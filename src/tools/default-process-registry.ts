/**
 * The process-wide registry: the server hands it to the RunService (exit notices, run cancel via
 * `killScope(runId)`, `shutdown()` on exit) and builtin plugins create their exec tools on it.
 */
import { ProcessRegistry } from './process-registry.js';

let shared: ProcessRegistry | null = null;

export function defaultProcessRegistry(): ProcessRegistry {
  shared ??= new ProcessRegistry();
  return shared;
}
