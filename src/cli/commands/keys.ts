/**
 * `runtrail keys list|add|rotate|revoke`: API keys of the data dir's users. A new key's text is printed
 * once, on stdout alone (so `KEY=$(runtrail keys add …)` keeps it); what is kept is its hash.
 */
import { intOpt, parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { auditCliChange, identityStoreOf, table, withIdentityErrors } from '../identity-cli.js';
import type { KeyView } from '../../tenants/identity-records.js';

function stateOf(k: KeyView): string {
  if (k.revoked_at) return 'revoked';
  if (k.expires_at && Date.parse(k.expires_at) <= Date.now()) return 'expired';
  return k.previous_valid_until ? `rotating (old key until ${k.previous_valid_until})` : 'active';
}

export const keysCommand: CliCommand = {
  name: 'keys',
  usage: `  keys list [--tenant T] [--user U]    API keys (never their secrets); --json
  keys add --tenant T --user U [--name N] [--scope S]... [--expires ISO-TIME]   prints the key once
  keys rotate <key-id> [--grace-s N]   a new secret; the old one works N s more (default 86400)
  keys revoke <key-id>                 the key stops working (its open streams close within a second)
`,
  async run(args, deps) {
    const [sub, ...rest] = args;
    const { values, positionals } = parse(rest, {
      json: { type: 'boolean' },
      tenant: { type: 'string' },
      user: { type: 'string' },
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      expires: { type: 'string' },
      'grace-s': { type: 'string' },
    });
    const store = identityStoreOf(values, deps);
    const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
    return withIdentityErrors(deps, async () => {
      if (sub === 'list') {
        const keys = await store.listKeys({ tenant: str('tenant'), user: str('user') });
        if (values.json) deps.stdout.write(`${JSON.stringify({ keys }, null, 2)}\n`);
        else
          deps.stdout.write(
            table([
              ['KEY', 'TENANT', 'USER', 'NAME', 'SCOPES', 'LAST USED', 'STATE'],
              ...keys.map((k) => [k.id, k.tenant, k.user, k.name || '-', k.scopes.join(','), k.last_used_at ?? 'never', stateOf(k)]),
            ]),
          );
        return EXIT.ok;
      }
      if (sub === 'add') {
        if (!str('user')) throw new UsageError('keys add needs --user U (and --tenant T unless it is default)');
        const made = await store.addKey(str('tenant') ?? 'default', {
          user: str('user'),
          ...(str('name') !== undefined ? { name: str('name') } : {}),
          ...(Array.isArray(values.scope) ? { scopes: values.scope } : {}),
          ...(str('expires') !== undefined ? { expires_at: str('expires') } : {}),
        });
        await auditCliChange(store, { action: 'key.created', tenant: made.view.tenant, target: `key:${made.view.id}`, after: made.view });
        deps.stdout.write(values.json ? `${JSON.stringify({ key: made.key, ...made.view })}\n` : `${made.key}\n`);
        if (!values.json)
          deps.stderr.write(`key ${made.view.id} for ${made.view.user} in ${made.view.tenant} (${made.view.scopes.join(', ')}); it is shown only now\n`);
        return EXIT.ok;
      }
      if (sub === 'rotate' || sub === 'revoke') {
        if (positionals.length !== 1) throw new UsageError(`keys ${sub} needs one key id (runtrail keys list shows them)`);
        if (sub === 'revoke') {
          const k = await store.revokeKey(positionals[0]);
          await auditCliChange(store, { action: 'key.revoked', tenant: k.tenant, target: `key:${k.id}`, after: k });
          deps.stdout.write(values.json ? `${JSON.stringify(k)}\n` : `key ${k.id} revoked\n`);
          return EXIT.ok;
        }
        const grace = intOpt(values, 'grace-s', 0);
        const made = await store.rotateKey(positionals[0], grace === undefined ? {} : { grace_s: grace });
        await auditCliChange(store, { action: 'key.rotated', tenant: made.view.tenant, target: `key:${made.view.id}`, after: made.view });
        deps.stdout.write(values.json ? `${JSON.stringify({ key: made.key, ...made.view })}\n` : `${made.key}\n`);
        if (!values.json)
          deps.stderr.write(
            `key ${made.view.id} rotated; ${made.view.previous_valid_until ? `the old key works until ${made.view.previous_valid_until}` : 'the old key no longer works'}\n`,
          );
        return EXIT.ok;
      }
      throw new UsageError(`keys needs list, add, rotate or revoke${sub ? `, got "${sub}"` : ''}`);
    });
  },
};
