/**
 * What Runtrail keeps is its owner's alone: run folders, uploads, logs and ledgers hold goals, inputs,
 * answers and command lines. A RunService sets the process's umask to 077, so every folder and file it
 * (or a command of its runs) makes is 0700 / 0600 whatever umask it was started with, and the data dir
 * and its folders, made earlier under another umask, are closed to others at start.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The folders Runtrail makes inside its data dir. */
const DATA_DIR_FOLDERS = ['runs', 'uploads', 'logs', 'mcp', 'process-events', 'cluster'];

/** New folders 0700, new files 0600, for this process and the commands it starts. */
export function ownerOnlyUmask(): void {
  try {
    process.umask(0o077);
  } catch {
    // a worker thread cannot set it (the process it runs in decides)
  }
}

async function close(dir: string): Promise<void> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory() || (st.mode & 0o077) === 0) return;
  // only a folder this user owns, never a shared one (a sticky /tmp) nor the home folder itself
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return;
  if (st.mode & 0o1000 || resolve(dir) === resolve(homedir())) return;
  await chmod(dir, 0o700);
}

/** Makes the data dir (0700) and closes it and its folders to other users. */
export async function ownerOnlyDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await close(dataDir);
  await Promise.all(DATA_DIR_FOLDERS.map((f) => close(join(dataDir, f))));
}
