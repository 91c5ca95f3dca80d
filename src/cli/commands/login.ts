/**
 * `runtrail login`: keeps an API key in the user's config (`$XDG_CONFIG_HOME/runtrail/credentials.json`,
 * else ~/.config/…; folder 0700, file 0600). The key comes from RUNTRAIL_KEY, --key, or is asked for;
 * its checksum is checked here (a mistyped key is exit 2 and nothing is written); with --server the
 * server is asked who the key is (GET /api/me), and a key it refuses is exit 1.
 */
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseApiKey } from '../../tenants/api-key.js';
import { parse } from '../args.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';

export function credentialsPath(env: CliDeps['env']): string {
  const base = env.XDG_CONFIG_HOME?.trim() ? resolve(env.XDG_CONFIG_HOME) : join(env.HOME?.trim() || homedir(), '.config');
  return join(base, 'runtrail', 'credentials.json');
}

export const loginCommand: CliCommand = {
  name: 'login',
  usage: `  login [--server URL]   keep an API key (RUNTRAIL_KEY, --key, or asked) in your config, mode 0600
`,
  async run(args, deps) {
    const { values } = parse(args, { server: { type: 'string' }, key: { type: 'string' } });
    const key = (typeof values.key === 'string' ? values.key : deps.env.RUNTRAIL_KEY?.trim()) || (await deps.ask?.('API key (rt_…): '))?.trim();
    if (!key) throw new UsageError('login needs a key: set RUNTRAIL_KEY, pass --key, or run it at a terminal to be asked');
    const parsed = parseApiKey(key);
    if (!parsed) {
      deps.stderr.write('runtrail: key: not a Runtrail API key, or mistyped (its checksum does not match); copy it again from `runtrail keys add`\n');
      return EXIT.usage;
    }
    const server = typeof values.server === 'string' ? values.server.replace(/\/+$/, '') : undefined;
    let who: { tenant?: string; user?: string; role?: string } = {};
    if (server !== undefined) {
      let res: Response;
      try {
        res = await fetch(`${server}/api/me`, { headers: { authorization: `Bearer ${key}` } });
      } catch (e) {
        deps.stderr.write(`runtrail: --server ${server}: cannot reach it (${(e as Error).message})\n`);
        return EXIT.failed;
      }
      if (res.status === 401) {
        deps.stderr.write(`runtrail: ${server} refused key ${parsed.keyId} (revoked, expired or unknown there)\n`);
        return EXIT.failed;
      }
      if (!res.ok) {
        deps.stderr.write(`runtrail: ${server}/api/me answered ${res.status}\n`);
        return EXIT.failed;
      }
      who = (await res.json()) as typeof who;
    }
    const file = credentialsPath(deps.env);
    await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ key, key_id: parsed.keyId, ...(server ? { server } : {}), ...who }, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, file);
    deps.stdout.write(`key ${parsed.keyId}${who.user ? ` (${who.user} in ${who.tenant}, ${who.role})` : ''} kept in ${file}\n`);
    return EXIT.ok;
  },
};
