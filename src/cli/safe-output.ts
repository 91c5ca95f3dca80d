/**
 * The CLI's stdout and stderr as they reach a terminal: whatever a command prints — a run's live text
 * and answer, `show`, `replay`, a diagnosis, an error — has the server's secrets masked
 * (events/secret-masker.ts) and every control sequence but colour taken out (events/terminal-safe-text.ts),
 * so a run's output cannot write the operator's clipboard, retitle the window, move the cursor over
 * what was printed or hide text. The CLI's own cursor control (erasing its status line) goes through
 * `writeControl`, which nothing a run prints reaches.
 */
import { maskSecrets } from '../events/secret-masker.js';
import { terminalSafe } from '../events/terminal-safe-text.js';
import type { CliOut } from './cli-io.js';

export function safeOut(stream: CliOut): CliOut {
  return {
    write: (chunk: string) => stream.write(terminalSafe(maskSecrets(chunk))),
    writeControl: (seq: string) => stream.write(seq),
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
  };
}
