/**
 * The server's own log as it is written: every line with the server's secrets masked and no control
 * sequence a terminal would act on (a request's URL, a header or a run's error is someone else's text,
 * and the operator reads the log on a terminal: `journalctl`, `docker logs`, `tail -f`).
 */
import { maskSecrets } from '../events/secret-masker.js';
import { terminalSafe } from '../events/terminal-safe-text.js';

/** pino's hooks for the server's own logger. */
export const SERVER_LOG_HOOKS = {
  streamWrite: (line: string): string => terminalSafe(maskSecrets(line)),
};
