import { resolve } from 'node:path';

/** `RUNTRAIL_DATA_DIR`, else `./.runtrail`; run folders live under `<dataDir>/runs`. */
export function defaultDataDir(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): string {
  const fromEnv = env.RUNTRAIL_DATA_DIR;
  return resolve(cwd, fromEnv?.trim() ? fromEnv : '.runtrail');
}
