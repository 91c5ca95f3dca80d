/** The CLI's stdout and stderr with the server's secrets masked (events/secret-masker.ts): whatever a
 *  command prints — a run's live text, `show`, a diagnosis, an error — shows no key or token. */
import { maskSecrets } from '../events/secret-masker.js';
import type { CliOut } from './cli-io.js';

export function maskedOut(stream: CliOut): CliOut {
  return {
    write: (chunk: string) => stream.write(maskSecrets(chunk)),
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
  };
}
