/**
 * What a running `serve` loaded, for the CLI beside it: `serve` writes `<dataDir>/serve.json` (its
 * pid, its address and a hash of the config.json files it read), and a command that changes what the
 * server acts on (a schedule) says so when config.json has changed since — the server keeps the
 * settings it started with (webhooks.allow among them) until it restarts, or reloads with --watch.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const STAMP_FILE = 'serve.json';

interface ServeStamp {
  pid: number;
  url: string | null;
  config: string;
}

/** A hash of the project's and the user's config.json as they are now ('' for a file that is missing). */
export function configStamp(projectDir: string, home: string | undefined): string {
  const files = [join(projectDir, '.runtrail', 'config.json'), ...(home ? [join(home, '.runtrail', 'config.json')] : [])];
  const h = createHash('sha256');
  for (const f of files) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      // no such file: its absence is part of what was loaded
    }
    h.update(f).update('\0').update(text).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

export function writeServeStamp(dataDir: string, stamp: ServeStamp): void {
  try {
    writeFileSync(join(dataDir, STAMP_FILE), JSON.stringify(stamp), { mode: 0o600 });
  } catch {
    // the notice is a courtesy: a data dir that cannot take it does not stop the server
  }
}

/** Removes the stamp when it is this process's own. */
export function removeServeStamp(dataDir: string): void {
  const s = readStamp(dataDir);
  if (s?.pid === process.pid) rmSync(join(dataDir, STAMP_FILE), { force: true });
}

function readStamp(dataDir: string): ServeStamp | null {
  try {
    const s = JSON.parse(readFileSync(join(dataDir, STAMP_FILE), 'utf8')) as ServeStamp;
    return typeof s.pid === 'number' && typeof s.config === 'string' ? s : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What to tell the user when a server on this data dir runs with config.json as it was before a change; null when none does. */
export function staleServerNotice(dataDir: string, projectDir: string, home: string | undefined): string | null {
  const s = readStamp(dataDir);
  if (!s || s.pid === process.pid || !alive(s.pid)) return null;
  if (s.config === configStamp(projectDir, home)) return null;
  return (
    `warning: the server running on this data dir (pid ${s.pid}${s.url ? `, ${s.url}` : ''}) has not seen the change to config.json: ` +
    'it fires this schedule and sends its webhooks with the settings it started with (webhooks.allow among them); ' +
    'restart it, or run serve --watch to reload config.json when it changes'
  );
}
