/**
 * A sandbox policy as Runtrail shows it (resolved_config.json, the start banner, `runtrail sandbox
 * check`): what is visible and writable, the network, the environment by name, each limit with what
 * enforces it on this machine, and what the operator's settings changed.
 */
import { diskCapMb, limitEnforcement } from './sandbox-limits.js';
import { resolveSandboxPolicy, type OperatorSandboxSettings, type ResolvedNetwork, type SandboxPolicy } from './sandbox-policy.js';
import { describeUnsupported, sandboxSupport } from './sandbox-support.js';

export interface SandboxDescription {
  mode: 'on' | 'off';
  read?: string[];
  write?: string[];
  network?: ResolvedNetwork;
  env?: string[];
  limits?: Record<string, { value: number; enforced_by: string }>;
  elevated?: 'off' | 'ask' | 'allow';
  notes?: string[];
  /** For mode off: said plainly. */
  warning?: string;
}

export function describeSandbox(policy: SandboxPolicy): SandboxDescription {
  if (policy.mode === 'off') {
    return { mode: 'off', warning: 'the operator\'s config.json sets sandbox.mode "off": every process of this run runs on the host, as the server\'s user' };
  }
  const how = limitEnforcement();
  return {
    mode: 'on',
    read: policy.read,
    write: policy.write,
    network: policy.network,
    env: policy.env,
    limits: {
      processes: { value: policy.limits.processes, enforced_by: how.processes },
      memory_mb: { value: policy.limits.memory_mb, enforced_by: how.memory },
      cpu_s: { value: policy.limits.cpu_s, enforced_by: how.cpu_s },
      file_mb: { value: policy.limits.file_mb, enforced_by: how.file_mb },
      disk_mb: { value: diskCapMb(policy.limits), enforced_by: how.disk_mb },
    },
    elevated: policy.elevated,
    ...(policy.notes.length ? { notes: policy.notes } : {}),
  };
}

/** The line the server prints at start: whether commands are sandboxed, and if not, why. */
export function sandboxStartLine(operator: OperatorSandboxSettings | undefined): string {
  const policy = resolveSandboxPolicy(operator, undefined);
  if (policy.mode === 'off')
    return 'SANDBOX OFF: config.json sets sandbox.mode "off"; the commands of runs run on the host with this server\'s user and files (written into each run\'s resolved_config.json)';
  const support = sandboxSupport();
  if (!support.ok) return `${describeUnsupported(support)} Runs that start processes fail until then.`;
  const how = limitEnforcement();
  const net = policy.network.mode === 'allow' ? `allow ${policy.network.allow.join(', ')} (through the filtering proxy)` : policy.network.mode;
  return `sandbox on (bubblewrap): network ${net}; processes ≤ ${policy.limits.processes} by ${how.processes}; memory ${policy.limits.memory_mb} MiB by ${how.memory}; elevated ${operator?.elevated ?? 'off'}`;
}
