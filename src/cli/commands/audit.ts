/** `runtrail audit list|verify`: the data dir's audit log; verify names the first edited or removed line (exit 1). */
import { join } from 'node:path';
import { AuditLog, auditPaths } from '../../tenants/audit-log.js';
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { dataDirOf, projectDirOf } from '../project-context.js';

export const auditCommand: CliCommand = {
  name: 'audit',
  usage: `  audit list [--tenant T] [--action A]   the audit log's lines (JSONL)
  audit verify        checks the log's hash chain; names an edited or removed line (exit 1)
`,
  async run(args, deps) {
    const [sub, ...rest] = args;
    const { values } = parse(rest, { tenant: { type: 'string' }, action: { type: 'string' } });
    const dataDir = dataDirOf(values, deps, projectDirOf(values, deps));
    const log = new AuditLog(dataDir);
    if (sub === 'list') {
      const t = typeof values.tenant === 'string' ? values.tenant : undefined;
      const a = typeof values.action === 'string' ? values.action : undefined;
      const lines = await log.read((l) => (t === undefined || l.tenant === t) && (a === undefined || l.action === a || l.action.startsWith(`${a}.`)));
      for (const l of lines) deps.stdout.write(`${JSON.stringify(l)}\n`);
      return EXIT.ok;
    }
    if (sub === 'verify') {
      const { lines, problem } = await log.verify();
      const file = auditPaths(dataDir).log;
      if (problem) {
        deps.stderr.write(`runtrail: ${file}: ${problem.message}\n`);
        return EXIT.failed;
      }
      deps.stdout.write(`${join(file)}: ${lines} line${lines === 1 ? '' : 's'}, the chain holds\n`);
      return EXIT.ok;
    }
    throw new UsageError(`audit needs list or verify${sub ? `, got "${sub}"` : ''}`);
  },
};
