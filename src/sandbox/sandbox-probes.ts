/**
 * Canary probes: real attempts, from inside a sandbox of the given policy, at what it must refuse —
 * write outside the workspace, read the user's home, reach a listener on the host's loopback, read
 * the parent's environment — and at what it must allow (write the workspace). `runtrail sandbox
 * check` and `runtrail doctor` print them; one that gets through is an escape.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxEnv } from './bwrap-command.js';
import { launchSandboxed } from './sandbox-launch.js';
import { pinSandboxPaths, type PinContext } from './sandbox-paths.js';
import { resolveSandboxPolicy, type OperatorSandboxSettings, type SandboxPolicy } from './sandbox-policy.js';
import { sandboxSupport } from './sandbox-support.js';

export interface ProbeResult {
  name: string;
  /** `refused`/`allowed` as the policy wants it; `escaped` when a refusal was expected and it got through. */
  outcome: 'refused' | 'allowed' | 'escaped' | 'blocked';
  detail: string;
}

async function inside(
  policy: Extract<SandboxPolicy, { mode: 'on' }>,
  ws: string,
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const launch = await launchSandboxed(policy, { file: '/bin/sh', args: ['-c', script], cwd: ws, writable: [ws], env: { ...sandboxEnv(policy), ...env } });
  try {
    return await new Promise((resolve) => {
      const child = spawn(launch.file, launch.args, { cwd: ws, env: launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      child.on('error', (e) => resolve({ code: null, out: e.message }));
      child.on('close', (code) => resolve({ code, out: out.trim() }));
    });
  } finally {
    await launch.cleanup();
  }
}

export async function runSandboxProbes(policy: Extract<SandboxPolicy, { mode: 'on' }>): Promise<ProbeResult[]> {
  const ws = mkdtempSync(join(tmpdir(), 'runtrail-canary-'));
  const canary = `runtrail-canary-${randomBytes(8).toString('hex')}`;
  // the canary sits in this process's environment, as a server's keys do
  const previous = process.env.RUNTRAIL_SANDBOX_CANARY;
  process.env.RUNTRAIL_SANDBOX_CANARY = canary;
  const listener = createServer((s) => s.destroy());
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as { port: number }).port;
  const home = homedir();
  const out: ProbeResult[] = [];
  const expectRefused = (name: string, r: { code: number | null; out: string }, marker: string, what: string) =>
    out.push(
      r.out.includes(marker)
        ? { name, outcome: 'escaped', detail: `${what} got through` }
        : { name, outcome: 'refused', detail: r.out.split('\n')[0] || `exit ${r.code}` },
    );
  try {
    expectRefused(
      'write outside the workspace',
      await inside(policy, ws, 'cd /etc && touch runtrail-canary && echo CANARY-WROTE', {}),
      'CANARY-WROTE',
      'a write to /etc',
    );
    expectRefused(
      'read the home folder',
      await inside(policy, ws, `ls -A ${JSON.stringify(home)} >/dev/null && echo CANARY-READ-HOME`, {}),
      'CANARY-READ-HOME',
      `a listing of ${home}`,
    );
    const loop = await inside(
      policy,
      ws,
      `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>{console.log('CANARY-CONNECTED');process.exit(0)}).on('error',e=>{console.log('refused: '+e.code);process.exit(1)})"`,
      {},
    );
    if (policy.network.mode === 'host')
      out.push({
        name: 'reach the host loopback',
        outcome: loop.out.includes('CANARY-CONNECTED') ? 'allowed' : 'blocked',
        detail: 'network: host (the operator granted it)',
      });
    else expectRefused('reach the host loopback', loop, 'CANARY-CONNECTED', `a connection to 127.0.0.1:${port}`);
    expectRefused(
      "read the parent's environment",
      await inside(
        policy,
        ws,
        `cat /proc/$PPID/environ /proc/1/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q ${canary} && echo CANARY-FOUND-ENV; echo checked`,
        {},
      ),
      'CANARY-FOUND-ENV',
      "the server's environment",
    );
    const write = await inside(policy, ws, 'echo ok > canary.txt && cat canary.txt', {});
    out.push(
      write.out === 'ok'
        ? { name: 'write the workspace', outcome: 'allowed', detail: 'ok' }
        : { name: 'write the workspace', outcome: 'blocked', detail: write.out || `exit ${write.code}` },
    );
  } finally {
    if (previous === undefined) delete process.env.RUNTRAIL_SANDBOX_CANARY;
    else process.env.RUNTRAIL_SANDBOX_CANARY = previous;
    listener.close();
    rmSync(ws, { recursive: true, force: true });
  }
  return out;
}

/** The probes as `runtrail doctor` lists its checks (config.json's own sandbox settings). */
export async function sandboxProbeChecks(
  operator: OperatorSandboxSettings | undefined,
  where: PinContext,
): Promise<Array<{ name: string; status: 'ok' | 'warn' | 'fail'; detail: string }>> {
  const pinned = pinSandboxPaths(resolveSandboxPolicy(operator, undefined), where);
  if (!pinned.ok) return [{ name: 'sandbox paths', status: 'fail', detail: `config.json ${pinned.refused.field}: ${pinned.refused.message}` }];
  const policy = pinned.policy;
  if (policy.mode === 'off')
    return [{ name: 'sandbox mode', status: 'warn', detail: 'config.json sets sandbox.mode "off": the commands of runs run on the host' }];
  if (!sandboxSupport().ok) return [];
  return (await runSandboxProbes(policy)).map((p) => ({
    name: `sandbox canary: ${p.name}`,
    status: p.outcome === 'escaped' || p.outcome === 'blocked' ? 'fail' : 'ok',
    detail: `${p.outcome} (${p.detail})`,
  }));
}
