import { join, resolve } from 'node:path';

/** `RUNTRAIL_DATA_DIR`, else `./.runtrail`; run folders live under `<dataDir>/runs`. */
export function defaultDataDir(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): string {
  const fromEnv = env.RUNTRAIL_DATA_DIR;
  return resolve(cwd, fromEnv?.trim() ? fromEnv : '.runtrail');
}

/** Where a run's file inputs may come from unless the service is told otherwise: the data dir's uploads. */
export function defaultInputRoots(dataDir: string): string[] {
  return [join(dataDir, 'uploads')];
}
