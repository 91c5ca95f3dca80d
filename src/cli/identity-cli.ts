/**
 * What `runtrail tenants|users|keys|audit` share: the data dir's identity store (the local operator is
 * the owner), and a refused change printed in the user's words (the field, then why) with exit 2.
 */
import { AuditLog, type AuditEvent } from '../tenants/audit-log.js';
import { IdentityError } from '../tenants/identity-error.js';
import { DEFAULT_TENANT } from '../tenants/identity-records.js';
import { IdentityStore } from '../tenants/identity-store.js';
import type { Values } from './args.js';
import { EXIT, type CliDeps } from './cli-io.js';
import { dataDirOf, projectDirOf } from './project-context.js';

export function identityStoreOf(values: Values, deps: CliDeps): IdentityStore {
  return new IdentityStore(dataDirOf(values, deps, projectDirOf(values, deps)));
}

/** Audits a change the local operator made (the owner, at this machine; no key). */
export function auditCliChange(store: IdentityStore, ev: Pick<AuditEvent, 'action' | 'tenant' | 'target' | 'before' | 'after'>): Promise<unknown> {
  return new AuditLog(store.dataDir).append({ ...ev, actor: { tenant: DEFAULT_TENANT, user: 'operator (cli)', key_id: null } });
}

/** Runs `fn`; an IdentityError is printed (`runtrail: <field>: <why>`) and is exit 2. */
export async function withIdentityErrors(deps: CliDeps, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof IdentityError)) throw e;
    deps.stderr.write(`runtrail: ${e.message}\n`);
    return EXIT.usage;
  }
}

/** Rows as aligned columns (the first row is the header). */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n')}\n`;
}
