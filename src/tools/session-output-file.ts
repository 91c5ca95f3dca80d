/**
 * A running session's recent output, on disk (runtime/session_output/<session_id>.log), so that the
 * next Runtrail can tell the model what a background session printed last when the process running
 * the run died with it (its in-memory buffers die too). Bounded: the file holds at most about twice
 * CAP_BYTES and is cut back to the last CAP_BYTES when it grows past that. Credentials are masked
 * before a byte is written (the server's secrets and the documented token shapes), whole lines at
 * a time so that a secret is never split across two writes. Removed when the session ends: the
 * files left in the folder are the sessions a crash cut off.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { appendFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { maskSecretValues } from '../events/secret-values.js';

/** What the file keeps at least of a session's output. */
export const CAP_BYTES = 16 * 1024;
/** Text without a newline is written anyway once it is this long (a progress bar never ends its line). */
const LINE_CAP = 4 * 1024;

export class SessionOutputFile {
  private readonly decoder = new StringDecoder('utf8');
  /** decoded text not yet written: the end of a line still to come */
  private pending = '';
  /** the last CAP_BYTES of what was written (masked), to cut the file back to */
  private tail = '';
  private inFile = 0;
  private writing: Promise<void> | null = null;
  private queued = '';
  private closed = false;
  private dirMade = false;

  constructor(readonly file: string) {}

  append(chunk: Buffer): void {
    if (this.closed) return;
    this.pending += this.decoder.write(chunk);
    const nl = this.pending.lastIndexOf('\n');
    let ready = '';
    if (nl >= 0) {
      ready = this.pending.slice(0, nl + 1);
      this.pending = this.pending.slice(nl + 1);
    }
    if (this.pending.length > LINE_CAP) {
      ready += this.pending;
      this.pending = '';
    }
    if (ready) this.enqueue(maskSecretValues(ready));
  }

  private enqueue(text: string): void {
    this.queued += text;
    this.tail = (this.tail + text).slice(-CAP_BYTES);
    // one write in flight: what arrives meanwhile goes in the next, in one append
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued && !this.closed) {
        const text = this.queued;
        this.queued = '';
        if (!this.dirMade) {
          mkdirSync(dirname(this.file), { recursive: true });
          this.dirMade = true;
        }
        this.inFile += Buffer.byteLength(text);
        if (this.inFile > 2 * CAP_BYTES) {
          // cut back to the tail; the rename keeps a crash from leaving a half-written file
          const tmp = `${this.file}.tmp`;
          await writeFile(tmp, this.tail);
          await rename(tmp, this.file);
          this.inFile = Buffer.byteLength(this.tail);
        } else await appendFile(this.file, text);
      }
    } catch {
      // a run folder that went away (or a full disk) must not fail the session
    } finally {
      this.writing = null;
    }
  }

  /** The session ended while this process lives: its output is the registry's to give, the file goes. */
  async remove(): Promise<void> {
    this.closed = true;
    await this.writing;
    rmSync(this.file, { force: true });
  }
}

/** The folder of a run's session output files: beside its ledger of process groups (runtime/processes.json). */
export function sessionOutputDirOf(ledgerFile: string): string {
  return join(dirname(ledgerFile), 'session_output');
}

/** The file of one session in a run's session_output folder. */
export function sessionOutputPath(dir: string, sessionId: string): string {
  return join(dir, `${sessionId.replace(/[^A-Za-z0-9_.-]/g, '_')}.log`);
}

/**
 * The last output of the sessions a dead process left (at most `maxChars` of each, masked again with
 * this process's secrets), by session id; the folder is removed, so it is told once.
 */
export function takeSessionOutputs(dir: string, maxChars = 2_000): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.log'));
  } catch {
    return out;
  }
  for (const n of names) {
    try {
      const text = readFileSync(join(dir, n), 'utf8');
      out.set(n.slice(0, -4), maskSecretValues(text.length > maxChars ? `…${text.slice(-maxChars)}` : text));
    } catch {
      // unreadable: that session's output is not told
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return out;
}
