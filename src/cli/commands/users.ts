/** `runtrail users list|add|rm --tenant T`: a tenant's users and service accounts, with their roles. */
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { auditCliChange, identityStoreOf, table, withIdentityErrors } from '../identity-cli.js';

export const usersCommand: CliCommand = {
  name: 'users',
  usage: `  users list --tenant T         a tenant's users and service accounts; --json
  users add <id> --tenant T --role owner|admin|member|viewer [--service]
  users rm <id> --tenant T      remove a user (their keys are revoked; never the last owner)
`,
  async run(args, deps) {
    const [sub, ...rest] = args;
    const { values, positionals } = parse(rest, {
      json: { type: 'boolean' },
      tenant: { type: 'string' },
      role: { type: 'string' },
      service: { type: 'boolean' },
    });
    const store = identityStoreOf(values, deps);
    const tenant = typeof values.tenant === 'string' ? values.tenant : 'default';
    return withIdentityErrors(deps, async () => {
      if (sub === 'list') {
        const users = await store.listUsers(tenant);
        if (values.json) deps.stdout.write(`${JSON.stringify({ users }, null, 2)}\n`);
        else deps.stdout.write(table([['USER', 'ROLE', 'KIND', 'CREATED'], ...users.map((u) => [u.id, u.role, u.kind, u.created_at])]));
        return EXIT.ok;
      }
      if (sub === 'add' || sub === 'rm') {
        if (positionals.length !== 1) throw new UsageError(`users ${sub} needs one user id, e.g. runtrail users ${sub} alice --tenant acme`);
        if (sub === 'rm') {
          const gone = await store.removeUser(tenant, positionals[0]);
          await auditCliChange(store, { action: 'user.removed', tenant, target: `user:${tenant}/${gone.id}`, before: gone });
          deps.stdout.write(`user ${positionals[0]} removed from ${tenant}; their keys are revoked\n`);
          return EXIT.ok;
        }
        const u = await store.addUser(tenant, {
          id: positionals[0],
          ...(typeof values.role === 'string' ? { role: values.role } : {}),
          kind: values.service ? 'service' : 'user',
        });
        await auditCliChange(store, { action: 'user.created', tenant: u.tenant, target: `user:${u.tenant}/${u.id}`, after: u });
        deps.stdout.write(
          values.json ? `${JSON.stringify(u)}\n` : `${u.kind === 'service' ? 'service account' : 'user'} ${u.id} added to ${u.tenant} as ${u.role}\n`,
        );
        return EXIT.ok;
      }
      throw new UsageError(`users needs list, add or rm${sub ? `, got "${sub}"` : ''}`);
    });
  },
};
