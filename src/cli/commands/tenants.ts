/** `runtrail tenants list|add`: the tenants of the data dir (the local operator is the server's owner). */
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { auditCliChange, identityStoreOf, table, withIdentityErrors } from '../identity-cli.js';

export const tenantsCommand: CliCommand = {
  name: 'tenants',
  usage: `  tenants list        the tenants (teams) of this server; --json
  tenants add <id>    a new tenant (a-z, 0-9, -), --name TEXT
`,
  async run(args, deps) {
    const [sub, ...rest] = args;
    const { values, positionals } = parse(rest, { json: { type: 'boolean' }, name: { type: 'string' } });
    const store = identityStoreOf(values, deps);
    return withIdentityErrors(deps, async () => {
      if (sub === 'list') {
        const tenants = await store.listTenants();
        if (values.json) deps.stdout.write(`${JSON.stringify({ tenants }, null, 2)}\n`);
        else deps.stdout.write(table([['TENANT', 'NAME', 'CREATED'], ...tenants.map((t) => [t.id, t.name, t.created_at])]));
        return EXIT.ok;
      }
      if (sub === 'add') {
        if (positionals.length !== 1) throw new UsageError('tenants add needs one tenant id, e.g. runtrail tenants add acme');
        const t = await store.addTenant({ id: positionals[0], ...(typeof values.name === 'string' ? { name: values.name } : {}) });
        await auditCliChange(store, { action: 'tenant.created', tenant: t.id, target: `tenant:${t.id}`, after: t });
        deps.stdout.write(values.json ? `${JSON.stringify(t)}\n` : `tenant ${t.id} added\n`);
        return EXIT.ok;
      }
      throw new UsageError(`tenants needs list or add${sub ? `, got "${sub}"` : ''}`);
    });
  },
};
