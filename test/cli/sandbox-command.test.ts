/**
 * `runtrail sandbox check [agent]` through the built binary: the agent's effective policy (its
 * `sandbox:` within config.json's) and canary probes run inside it, each refused; with the
 * operator's mode "off" it says so and runs no probe.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
let p: ProjectFixture | null = null;
let home = '';
afterEach(() => {
  p?.cleanup();
  p = null;
  if (home) rmSync(home, { recursive: true, force: true });
});

function runtrail(args: string[], cwd: string) {
  home ||= mkdtempSync(join(tmpdir(), 'runtrail-home-'));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) env[k] = v;
  return spawnSync(process.execPath, [MAIN, ...args], { cwd, env: { ...env, HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 });
}

describe('runtrail sandbox check', () => {
  it("prints an agent's policy within config.json's and every canary refused", () => {
    p = makeProject({
      '.runtrail/agents/net.md': agentFile(
        'name: net\ndescription: d\ntools: [exec]\nsandbox: { network: { allow: ["api.github.com:443"] }, limits: { processes: 4096 } }',
      ),
      '.runtrail/config.json': JSON.stringify({ sandbox: { limits: { processes: 2048 } } }),
    });
    const r = runtrail(['sandbox', 'check', 'net', '--json'], p.dir);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      policy: { network: unknown; limits: { processes: { value: number } }; notes: string[] };
      probes: Array<{ name: string; outcome: string }>;
    };
    expect(out.ok).toBe(true);
    expect(out.policy.network).toEqual({ mode: 'allow', allow: ['api.github.com:443'] });
    expect(out.policy.limits.processes.value).toBe(2048);
    expect(out.policy.notes.join()).toMatch(/processes: the agent asks 4096, the operator allows 2048/);
    expect(Object.fromEntries(out.probes.map((q) => [q.name, q.outcome]))).toEqual({
      'write outside the workspace': 'refused',
      'read the home folder': 'refused',
      'reach the host loopback': 'refused',
      "read the parent's environment": 'refused',
      'write the workspace': 'allowed',
    });
  });

  it('says the sandbox is off when the operator turned it off, and names a missing agent', () => {
    p = makeProject({ '.runtrail/config.json': JSON.stringify({ sandbox: { mode: 'off' } }) });
    const off = runtrail(['sandbox', 'check'], p.dir);
    expect(off.status).toBe(0);
    expect(off.stdout).toMatch(/"mode": "off"/);
    expect(off.stdout).toMatch(/on the host/);
    const missing = runtrail(['sandbox', 'check', 'nope'], p.dir);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/no agent "nope"/);
  });
});
