import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolveSandboxPolicy, type AgentSandboxSettings } from '../../src/sandbox/sandbox-policy.js';
import { leftoverCgroups, limitEnforcement } from '../../src/sandbox/sandbox-limits.js';
import { sandboxSupport } from '../../src/sandbox/sandbox-support.js';
import { giveTree, sandboxOwner } from '../../src/sandbox/sandbox-user.js';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { createProcessTool } from '../../src/tools/process-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { eventually, liveProcesses, marker } from '../tools/helpers.js';

// Every attack here is a real command in the real sandbox (bubblewrap, made sure of by npm test).
const SECRET = `sk-test-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
let base: string;
let ws: string;
let registry: ProcessRegistry;

beforeAll(() => {
  expect(sandboxSupport(), 'bubblewrap must be installed: npm test runs scripts/ensure-bubblewrap.mjs').toMatchObject({ ok: true });
  base = mkdtempSync(join(tmpdir(), 'rt-sbx-'));
  ws = join(base, 'runs', 'run_a');
  mkdirSync(join(ws, 'runtime'), { recursive: true });
  mkdirSync(join(base, 'runs', 'run_other'), { recursive: true });
  writeFileSync(join(base, 'runs', 'run_other', 'secret.txt'), 'another run');
  writeFileSync(join(ws, 'runtime', 'status.json'), '{"state":"running"}');
  process.env.RT_SANDBOX_TEST_API_KEY = SECRET;
});
afterAll(() => {
  delete process.env.RT_SANDBOX_TEST_API_KEY;
  rmSync(base, { recursive: true, force: true });
});
afterEach(async () => {
  await registry?.shutdown();
});

function tools(agent: AgentSandboxSettings = {}) {
  registry = new ProcessRegistry({ sandbox: resolveSandboxPolicy(undefined, agent) });
  registry.sandboxScope('run_a', { policy: resolveSandboxPolicy(undefined, agent), readOnlyInside: [join(ws, 'runtime')] });
  const exec = createExecTool({ registry, scopeKey: 'run_a', cwd: ws });
  const proc = createProcessTool({ registry, scopeKey: 'run_a' });
  return { exec, proc };
}

/** What a test puts in the workspace as the server would: on a root server, the run's user's. */
function asTheRuns(path: string): void {
  const owner = sandboxOwner();
  if (owner) giveTree(path, owner);
}

async function run(command: string, agent: AgentSandboxSettings = {}, extra: Record<string, unknown> = {}) {
  const { exec } = tools(agent);
  const r = await exec.execute({ command, ...extra });
  return { ...r, out: r.content };
}

describe('the sandbox closes what a command could reach', () => {
  it("cannot read the server's environment through /proc", async () => {
    const r = await run('cat /proc/$PPID/environ /proc/1/environ /proc/*/environ 2>/dev/null | tr "\\0" "\\n"; echo ppid=$PPID');
    expect(r.out).not.toContain(SECRET);
    expect(r.out).not.toContain('RT_SANDBOX_TEST_API_KEY');
    // its own pid namespace: the parent it sees is the sandbox's init, not the server
    expect(r.out).toContain('ppid=1');
    expect(r.details).toMatchObject({ sandbox: { mode: 'on', network: 'none' } });
  });

  it("cannot kill the server, by $PPID or by the server's real pid", async () => {
    const r = await run(`kill -9 $PPID; kill -9 ${process.pid}; echo after-kill`);
    expect(r.out).toContain('after-kill');
    expect(process.kill(process.pid, 0)).toBe(true);
  });

  it('cannot read /etc/shadow, /root, home or another run', async () => {
    const r = await run(
      `cat /etc/shadow && echo READ-SHADOW; ls /root && echo READ-ROOT; ls /home/* && echo READ-HOME; cat ${join(base, 'runs', 'run_other', 'secret.txt')} && echo READ-OTHER; cat /etc/hostname >/dev/null && echo etc-readable`,
    );
    expect(r.out).not.toMatch(/READ-(SHADOW|ROOT|HOME|OTHER)/);
    expect(r.out).not.toContain('another run');
    expect(r.out).toContain('etc-readable');
  });

  it('cannot write outside the workspace, by cd or by path; /tmp is its own', async () => {
    const r = await run(
      'cd /etc && touch x && echo WROTE-ETC; touch /usr/x && echo WROTE-USR; touch /x && echo WROTE-ROOT; touch /tmp/mine && echo tmp-ok; cd - >/dev/null; echo ok > here.txt && cat here.txt',
    );
    expect(r.out).not.toMatch(/WROTE-/);
    expect(r.out).toContain('Read-only file system');
    expect(r.out).toContain('tmp-ok');
    expect(readFileSync(join(ws, 'here.txt'), 'utf8')).toBe('ok\n');
    expect(existsSync('/tmp/mine')).toBe(false);
  });

  it("cannot write the run's own record", async () => {
    const r = await run('echo \'{"state":"completed"}\' > runtime/status.json && echo FORGED; touch runtime/new && echo FORGED2; cat runtime/status.json');
    expect(r.out).not.toMatch(/FORGED/);
    expect(readFileSync(join(ws, 'runtime', 'status.json'), 'utf8')).toBe('{"state":"running"}');
  });

  it('cannot leave through symlinks, hard links or /proc/1/root', async () => {
    const r = await run(
      'ln -s /root r && ls r/ && echo VIA-SYMLINK; ln -s /etc/shadow s && cat s && echo VIA-SHADOW-LINK; ln /etc/passwd pw && echo >> pw && echo VIA-HARDLINK; cat /proc/1/root/etc/shadow && echo VIA-PROC1; ls /proc/1/root/root && echo VIA-PROC1-ROOT',
    );
    expect(r.out).not.toMatch(/VIA-/);
    expect(readFileSync('/etc/passwd', 'utf8')).not.toMatch(/\n\n$/);
  });

  it('cannot make namespaces or mounts of its own (no capabilities)', async () => {
    const r = await run(
      'unshare -Urm true && echo UNSHARED; unshare -m true && echo UNSHARED2; mount -t tmpfs none /tmp && echo MOUNTED; umount /etc && echo UNMOUNTED',
    );
    expect(r.out).not.toMatch(/UNSHARED|MOUNTED/);
  });

  it('cannot reach a listener on the host loopback (no network by default)', async () => {
    let accepted = 0;
    const server: Server = createServer((s) => {
      accepted++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await run(
        `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>console.log('CONNECTED')).on('error',e=>console.log('refused',e.code))"`,
      );
      expect(r.out).toContain('refused');
      expect(r.out).not.toContain('CONNECTED');
      expect(accepted).toBe(0);
    } finally {
      server.close();
    }
  });

  it('leaves nothing running after the command: setsid nohup daemons die with the sandbox', async () => {
    const m = marker();
    const r = await run(`setsid nohup sleep ${m} >/dev/null 2>&1 & (sleep ${m} &) ; echo started`);
    expect(r.out).toContain('started');
    expect(await eventually(() => liveProcesses(m).length === 0, 5_000)).toBe(true);
  });

  it('dies with the process that started it, even a SIGKILLed one (no sandbox outlives its server)', async () => {
    const m = marker();
    const launcher = join(runtrailPackageRoot(), 'dist', 'src', 'sandbox', 'sandbox-launch.js');
    const policyMod = join(runtrailPackageRoot(), 'dist', 'src', 'sandbox', 'sandbox-policy.js');
    // a stand-in server: starts a sandboxed sleep, says so, then waits to be killed
    const script = `
      const { launchSandboxed } = await import(${JSON.stringify(launcher)});
      const { resolveSandboxPolicy } = await import(${JSON.stringify(policyMod)});
      const { spawn } = await import('node:child_process');
      const l = await launchSandboxed(resolveSandboxPolicy(undefined, undefined), { file: '/bin/sh', args: ['-c', 'setsid sleep ${m} & sleep ${m}'], cwd: ${JSON.stringify(ws)}, writable: [${JSON.stringify(ws)}] });
      spawn(l.file, l.args, { stdio: 'ignore', detached: true });
      setTimeout(() => console.log('started'), 300);
      setInterval(() => {}, 1000);`;
    const server = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((r) => server.stdout!.once('data', () => r()));
    expect(await eventually(() => liveProcesses(m).length >= 2, 5_000)).toBe(true);
    server.kill('SIGKILL');
    expect(await eventually(() => liveProcesses(m).length === 0, 5_000)).toBe(true);
  });

  it.runIf(limitEnforcement().processes.startsWith('pids cgroup'))('stops a fork bomb at the process limit while the server stays healthy', async () => {
    const { exec } = tools({ limits: { processes: 64 } });
    const started = exec.execute({ command: "bash -c ':(){ :|:& };:'; sleep 3", timeout: 5 });
    // sample the sandbox's process count while it rages; the server's side keeps starting processes
    let peak = 0;
    let serverSpawns = 0;
    const sampler = setInterval(() => {
      for (const dir of leftoverCgroups()) {
        try {
          peak = Math.max(peak, Number(readFileSync(join(dir, 'pids.current'), 'utf8')));
        } catch {
          /* memory cgroup, or gone */
        }
      }
      if (spawnSync('true').status === 0) serverSpawns++;
    }, 20);
    const r = await started;
    clearInterval(sampler);
    // the bomb reached its ceiling and never went above it
    expect(peak).toBeGreaterThan(32);
    expect(peak).toBeLessThanOrEqual(64);
    expect(serverSpawns).toBeGreaterThan(0);
    expect(r.content).toMatch(/fork|Resource temporarily unavailable/i);
    expect(await eventually(() => leftoverCgroups().length === 0, 5_000)).toBe(true);
  });

  it.runIf(limitEnforcement().processes.startsWith('pids cgroup'))('counts every process: 200 sleeps under a limit of 64 fail to start', async () => {
    const r = await run('for i in $(seq 200); do sleep 3 & done 2>&1 | head -1; echo end', { limits: { processes: 64 } });
    expect(r.out).toMatch(/fork/i);
  });

  it('hands only the fixed environment plus variables granted by name', async () => {
    process.env.RT_SANDBOX_GRANTED = 'granted-value';
    try {
      const r = await run('env | sort', { env: ['RT_SANDBOX_GRANTED', 'RT_SANDBOX_TEST_API_KEY'] });
      expect(r.out).toContain('RT_SANDBOX_GRANTED=granted-value');
      expect(r.out).toContain('HOME=/tmp/home');
      // a secret-looking name needs the operator's grant, not the agent's
      expect(r.out).not.toContain(SECRET);
    } finally {
      delete process.env.RT_SANDBOX_GRANTED;
    }
  });
});

describe('ordinary work inside the sandbox', () => {
  it("writes a workdir the operator or CLI user named outside the workspace (shell_task's), and nothing beside it", async () => {
    const named = join(base, 'named-workdir');
    mkdirSync(named, { recursive: true });
    registry = new ProcessRegistry({ sandbox: resolveSandboxPolicy(undefined, undefined) });
    const exec = createExecTool({ registry, scopeKey: 'run_b', cwd: ws, allowedRoots: [ws, named] });
    const r = await exec.execute({
      command: `echo built > out.txt && touch ${join(base, 'beside.txt')} ; touch ${join(base, 'runs', 'run_other', 'x')}; echo end`,
      workdir: named,
    });
    expect(r.content).toContain('end');
    expect(readFileSync(join(named, 'out.txt'), 'utf8')).toBe('built\n');
    // beside it is the sandbox's private /tmp: nothing reaches the host's
    expect(existsSync(join(base, 'beside.txt'))).toBe(false);
    expect(existsSync(join(base, 'runs', 'run_other', 'x'))).toBe(false);
  });

  it('runs node, python3 and git', async () => {
    const r = await run(
      'node -e "console.log(\'node\', 6*7)" && python3 -c "print(\'python\', 6*7)" && git init -q g && cd g && echo a > a && git add a && git -c user.email=a@b -c user.name=a commit -qm one && git log --oneline | wc -l',
    );
    expect(r.ok).toBe(true);
    expect(r.out).toContain('node 42');
    expect(r.out).toContain('python 42');
    expect(r.out).toMatch(/\n1\n/);
  });

  it('builds a small project with npm run build in the workdir', async () => {
    const proj = join(ws, 'proj');
    mkdirSync(proj, { recursive: true });
    writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0', scripts: { build: 'node build.js' } }));
    writeFileSync(
      join(proj, 'build.js'),
      "require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/out.txt','built '+process.version)",
    );
    asTheRuns(proj);
    const r = await run('npm run build --silent', {}, { workdir: 'proj' });
    expect(r.ok, r.out).toBe(true);
    expect(readFileSync(join(proj, 'dist', 'out.txt'), 'utf8')).toMatch(/^built v\d+/);
  });

  it('runs a pty session with a terminal', async () => {
    const r = await run('tty; test -t 0 && echo is-a-tty', {}, { pty: true });
    expect(r.out).toContain('is-a-tty');
    expect(r.details).toMatchObject({ pty: true, sandbox: { mode: 'on' } });
  });

  it('runs background sessions that poll, log and kill', async () => {
    const { exec, proc } = tools();
    const m = marker();
    const started = await exec.execute({ command: `echo begin; sleep ${m}`, background: true });
    const id = (started.details as { sessionId: string }).sessionId;
    expect(await eventually(() => liveProcesses(m).length > 0, 5_000)).toBe(true);
    const polled = await proc.execute({ action: 'poll', sessionId: id, waitMs: 500 });
    expect(polled.content).toContain('begin');
    const log = await proc.execute({ action: 'log', sessionId: id });
    expect(log.content).toContain('begin');
    const killed = await proc.execute({ action: 'kill', sessionId: id });
    expect(killed.ok).toBe(true);
    expect(await eventually(() => liveProcesses(m).length === 0, 5_000)).toBe(true);
  });
});
