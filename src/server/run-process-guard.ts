/**
 * Decisions come from outside the run: an approval decision, a cancel or a steer whose connection
 * belongs to one of a run's processes (possible only where the operator gave a sandbox the host
 * network, or ran a command elevated or unsandboxed) is refused with 403, whatever token it holds.
 */
import type { FastifyRequest } from 'fastify';
import { runProcessBehind } from '../sandbox/socket-owner.js';
import { HttpError } from './http-error.js';

export function refuseRunProcess(req: FastifyRequest, what: string): void {
  const s = req.raw.socket;
  const owner = runProcessBehind(s.remoteAddress, s.remotePort, s.localPort);
  if (owner) {
    throw new HttpError(
      403,
      'run_process_refused',
      `${what} refused: the connection comes from process ${owner.pid}, which belongs to a run (${owner.why}); decisions must come from outside the run`,
    );
  }
}
