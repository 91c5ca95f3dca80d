/**
 * `runtrail sandbox check [agent]`: the effective sandbox policy of an agent (its `sandbox:` within
 * config.json's), with what enforces each limit on this machine, then canary probes run inside it —
 * write outside, read the home folder, reach the host loopback, read the parent's environment. Exit 1
 * when the sandbox cannot start or a probe got through.
 */
import { describeSandbox } from '../../sandbox/sandbox-description.js';
import { runSandboxProbes } from '../../sandbox/sandbox-probes.js';
import { pinnedRunPolicy, runtrailDirs } from '../../sandbox/sandbox-paths.js';
import { describeUnsupported, sandboxSupport } from '../../sandbox/sandbox-support.js';
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { dataDirOf, loadRegistry, projectDirOf } from '../project-context.js';

/** What the printed policy is: an agent's or none, within config.json's "sandbox" or, when no config.json sets one, the defaults. */
function policyLabel(agentName: string | undefined, configured: boolean): string {
  const base = configured ? `config.json's "sandbox" settings` : `the default settings (no config.json sets "sandbox")`;
  return agentName ? `sandbox of agent ${agentName}, within ${base}` : `sandbox of ${base}`;
}

export const sandboxCommand: CliCommand = {
  name: 'sandbox',
  usage: `  sandbox check [agent]  the sandbox policy of an agent (or config.json's alone) and canary probes run
                      inside it (write outside, read home, reach loopback, read the parent's environment): --json
`,
  async run(args, deps) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } });
    const [sub, agentName, extra] = positionals;
    if (sub !== 'check') throw new UsageError(`sandbox takes "check [agent]", got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`);
    if (extra !== undefined) throw new UsageError(`sandbox check takes at most one agent, got ${JSON.stringify(extra)} too`);
    const projectDir = projectDirOf(values, deps);
    const registry = await loadRegistry(projectDir, deps);
    const agent = agentName === undefined ? undefined : registry.get(agentName);
    if (agentName !== undefined && !agent) throw new UsageError(`no agent ${JSON.stringify(agentName)}; runtrail agents lists them`);
    const pinned = pinnedRunPolicy(registry.config.sandbox, agent?.sandbox, {
      projectDir,
      protectedDirs: runtrailDirs(projectDir, dataDirOf(values, deps, projectDir)),
      agentName: agentName ?? '',
    });
    if (!pinned.ok) throw new UsageError(`${pinned.refused.field}: ${pinned.refused.message}`);
    const policy = pinned.policy;
    const description = describeSandbox(policy);
    const support = sandboxSupport();
    const probes = policy.mode === 'on' && support.ok ? await runSandboxProbes(policy) : [];
    const failed = (policy.mode === 'on' && !support.ok) || probes.some((p) => p.outcome === 'escaped' || p.outcome === 'blocked');
    if (values.json) {
      deps.stdout.write(
        `${JSON.stringify({ ok: !failed, agent: agentName ?? null, settings: registry.config.sandbox !== undefined ? 'config.json' : 'defaults', policy: description, ...(support.ok ? {} : { unavailable: describeUnsupported(support) }), probes })}\n`,
      );
    } else {
      deps.stdout.write(`${policyLabel(agentName, registry.config.sandbox !== undefined)}:\n${JSON.stringify(description, null, 2)}\n`);
      if (policy.mode === 'on' && !support.ok) deps.stdout.write(`✗ ${describeUnsupported(support)}\n`);
      for (const p of probes) deps.stdout.write(`${p.outcome === 'escaped' || p.outcome === 'blocked' ? '✗' : '✓'} ${p.name}: ${p.outcome} (${p.detail})\n`);
    }
    return failed ? EXIT.failed : EXIT.ok;
  },
};
