/**
 * A file's new content put in place atomically: written to `tmp`, then renamed over `target`, so a
 * reader sees the old file or the new one, never half of it.
 *
 * Through fs callbacks rather than fs/promises: the same four thread-pool calls (open, write, close,
 * rename) cost about a third less of the main thread's time (no FileHandle, no promise per step;
 * measured 0.44–0.50 → 0.30–0.35 ms for three status-sized files). A run writes a dozen such files,
 * and a burst of new runs queues all of theirs on the main thread.
 */
import { close, open, rename, write } from 'node:fs';

export function replaceFile(tmp: string, target: string, content: string): Promise<void> {
  const buf = Buffer.from(content, 'utf8');
  return new Promise((resolve, reject) => {
    open(tmp, 'w', (openErr, fd) => {
      if (openErr) return reject(openErr);
      const fail = (e: Error): void => close(fd, () => reject(e));
      const finish = (): void =>
        close(fd, (closeErr) => {
          if (closeErr) return reject(closeErr);
          rename(tmp, target, (renameErr) => (renameErr ? reject(renameErr) : resolve()));
        });
      // a short write is continued from where it stopped
      const writeFrom = (offset: number): void => {
        if (offset >= buf.length) return finish();
        write(fd, buf, offset, buf.length - offset, null, (writeErr, n) => {
          if (writeErr) fail(writeErr);
          else if (n <= 0) fail(new Error(`${tmp}: the write made no progress`));
          else writeFrom(offset + n);
        });
      };
      writeFrom(0);
    });
  });
}
