/**
 * No host root inside, and nothing the model chooses reaches the host side: attacks by someone who
 * knows the launcher (native/sandbox-launch.c, seccomp-filter.c) and bwrap-command.ts, as real
 * commands in the real sandbox. On a root server (as these tests run here) the sandbox's processes
 * are the unprivileged sandbox user; on an ordinary one, the server's own uid in a user namespace.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchSandboxed } from '../../src/sandbox/sandbox-launch.js';
import { LAUNCH_ENV } from '../../src/sandbox/sandbox-launcher.js';
import { resolveSandboxPolicy } from '../../src/sandbox/sandbox-policy.js';
import { sandboxSupport } from '../../src/sandbox/sandbox-support.js';
import { handOver, sandboxIdentity, sandboxOwner } from '../../src/sandbox/sandbox-user.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';
import { eventually, liveProcesses, marker } from '../tools/helpers.js';

const x64 = process.arch === 'x64';
let base: string;
let ws: string;
let registry: ProcessRegistry;

// Every call is made by number (x86-64) so the answer is the kernel's, not a library's guess.
// Outcomes are "ok" or the errno's name.
const PROBE = `
import ctypes, errno, json, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    conv = [a if isinstance(a, (ctypes.c_char_p, ctypes.c_void_p)) else ctypes.c_long(a) for a in args]
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return r if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
def name(r):
    return 'ok' if isinstance(r, int) else r
def open_w(p):
    try:
        os.close(os.open(p, os.O_WRONLY)); return 'ok'
    except OSError as e:
        return errno.errorcode[e.errno]
out = {}
out['uid'] = os.getuid()
out['seccomp'] = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0]
out['core_pattern'] = open_w('/proc/sys/kernel/core_pattern')
out['drop_caches'] = open_w('/proc/sys/vm/drop_caches')
out['sysrq'] = open_w('/proc/sysrq-trigger') if os.path.exists('/proc/sysrq-trigger') else 'absent'
out['sys'] = os.listdir('/sys') if os.path.isdir('/sys') else 'absent'
S = lambda s: ctypes.c_char_p(s.encode())
# keyctl 250, add_key 248, request_key 249
out['session_keyring'] = sc(250, 0, -3, 1)
out['own_key'] = name(sc(248, S('user'), S('mine'), S('v'), 1, -3))
out['user_keyring'] = name(sc(250, 0, -4, 0))
out['user_session_keyring'] = name(sc(250, 0, -5, 0))
out['add_to_user_keyring'] = name(sc(248, S('user'), S('x'), S('v'), 1, -4))
out['join_named'] = name(sc(250, 1, S('runtrail-shared')))
out['request_key'] = name(sc(249, S('user'), S('x'), ctypes.c_void_p(0), -3))
canary = sys.argv[1] if len(sys.argv) > 1 else ''
out['search_canary'] = name(sc(250, 10, -3, S('user'), S(canary), 0)) if canary else 'none'
out['proc_keys'] = open('/proc/keys').read()
# bpf 321 (map create, zeroed attr), perf_event_open 298 (NULL attr: EFAULT unfiltered),
# userfaultfd 323 (user-mode only: allowed unfiltered), io_uring_setup 425 (NULL: EFAULT unfiltered),
# kexec_load 246, mount 165, open_by_handle_at 304, init_module 175, syslog 103
attr = ctypes.create_string_buffer(128)
out['bpf'] = name(sc(321, 0, ctypes.c_void_p(ctypes.addressof(attr)), 128))
out['perf_event_open'] = name(sc(298, ctypes.c_void_p(0), 0, -1, -1, 0))
out['userfaultfd'] = name(sc(323, 1))
out['io_uring_setup'] = name(sc(425, 1, ctypes.c_void_p(0)))
out['kexec_load'] = name(sc(246, 0, 0, ctypes.c_void_p(0), 0))
out['mount'] = name(sc(165, S('none'), S('/tmp'), S('tmpfs'), 0, ctypes.c_void_p(0)))
out['open_by_handle_at'] = name(sc(304, -100, ctypes.c_void_p(0), 0))
out['init_module'] = name(sc(175, ctypes.c_void_p(0), 0, S('')))
out['syslog'] = name(sc(103, 3, ctypes.c_void_p(0), 0))
out['unshare_user'] = name(sc(272, 0x10000000))
# ptrace 101: attaching to its own child is refused; a child asking to be traced (strace, gdb run) is not
child = os.fork()
if child == 0:
    time.sleep(5); os._exit(0)
out['ptrace_attach'] = name(sc(101, 16, child, 0, 0))
out['ptrace_seize'] = name(sc(101, 0x4206, child, 0, 0))
os.kill(child, 9); os.waitpid(child, 0)
child = os.fork()
if child == 0:
    os._exit(0 if sc(101, 0, 0, 0, 0) == 0 else 1)
out['ptrace_traceme'] = 'ok' if os.waitpid(child, 0)[1] == 0 else 'refused'
open('mine.txt', 'w').write('x')
try:
    os.chown('mine.txt', 0, 0); out['chown_root'] = 'ok'
except OSError as e:
    out['chown_root'] = errno.errorcode[e.errno]
print('PROBE' + json.dumps(out))
`;

beforeAll(() => {
  expect(sandboxSupport(), 'bubblewrap and the launcher: npm test runs scripts/ensure-*.mjs').toMatchObject({ ok: true });
  base = mkdtempSync(join(tmpdir(), 'rt-sbx-root-'));
  ws = join(base, 'runs', 'run_r', 'workspace');
  execFileSync('mkdir', ['-p', ws]);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));
afterEach(async () => {
  await registry?.shutdown();
});

function exec() {
  registry = new ProcessRegistry({ sandbox: resolveSandboxPolicy(undefined, {}) });
  return createExecTool({ registry, scopeKey: 'run_r', cwd: ws });
}

async function run(command: string, extra: Record<string, unknown> = {}) {
  const r = await exec().execute({ command, ...extra });
  return r.content;
}

async function probe(canary = ''): Promise<Record<string, unknown>> {
  writeFileSync(join(ws, 'probe.py'), PROBE);
  const out = await run(`python3 probe.py ${canary}`);
  const line = out.split('\n').find((l) => l.startsWith('PROBE'));
  if (!line) throw new Error(`the probe printed no result:\n${out}`);
  return JSON.parse(line.slice('PROBE'.length)) as Record<string, unknown>;
}

/** The uid the sandbox's processes must have on the host. */
function expectedHostUid(): number {
  const id = sandboxIdentity();
  return id.switching ? (id.uid as number) : (process.getuid?.() as number);
}

/** Runs a short Python snippet on the host, in this process's session keyring. */
function hostPython(code: string): string {
  return execFileSync('python3', ['-c', code], { encoding: 'utf8' }).trim();
}

describe('no host root inside', () => {
  it("runs as an unprivileged uid on the host, and what it writes is that uid's, never root's", async () => {
    const m = marker();
    const tool = exec();
    await tool.execute({ command: `echo made > made.txt; sleep ${m}`, background: true });
    expect(await eventually(() => liveProcesses(m).some((l) => l.trim().split(/\s+/)[3] === 'sleep'), 5_000)).toBe(true);
    const sleeper = liveProcesses(m).find((l) => l.trim().split(/\s+/)[3] === 'sleep')!;
    const status = readFileSync(`/proc/${sleeper.trim().split(/\s+/)[0]}/status`, 'utf8');
    const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
    expect(uids).toEqual([expectedHostUid(), expectedHostUid(), expectedHostUid(), expectedHostUid()]);
    if (process.getuid?.() === 0) expect(uids).not.toContain(0);
    expect(/^CapEff:\s+0+$/m.test(status)).toBe(true);
    await eventually(() => {
      try {
        return lstatSync(join(ws, 'made.txt')).size > 0;
      } catch {
        return false;
      }
    }, 5_000);
    expect(lstatSync(join(ws, 'made.txt')).uid).toBe(expectedHostUid());
  });

  it.runIf(process.getuid?.() === 0)('hands the run its own folder, never a shared one (/tmp-like) nor what is shared inside it', () => {
    const owner = sandboxOwner()!;
    const own = mkdtempSync(join(base, 'own-'));
    const sharedInside = join(own, 'scratch');
    execFileSync('mkdir', ['-p', join(sharedInside, 'x')]);
    execFileSync('chmod', ['1777', sharedInside]);
    writeFileSync(join(own, 'a.txt'), 'a');
    const sharedTop = mkdtempSync(join(base, 'shared-'));
    execFileSync('chmod', ['1777', sharedTop]);
    writeFileSync(join(sharedTop, 'someone-elses.txt'), 'b');
    handOver(own, owner);
    handOver(sharedTop, owner);
    expect(lstatSync(own).uid).toBe(owner.uid);
    expect(lstatSync(join(own, 'a.txt')).uid).toBe(owner.uid);
    expect(lstatSync(sharedInside).uid).toBe(0);
    expect(lstatSync(join(sharedInside, 'x')).uid).toBe(0);
    expect(lstatSync(sharedTop).uid).toBe(0);
    expect(lstatSync(join(sharedTop, 'someone-elses.txt')).uid).toBe(0);
  });

  it.runIf(x64)("cannot write the kernel's settings (core_pattern, drop_caches, sysrq) nor see /sys; /proc/sys cannot be remounted", async () => {
    const before = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
    const p = await probe();
    expect(p.uid).toBe(sandboxIdentity().switching ? expectedHostUid() : p.uid);
    expect(p.core_pattern).not.toBe('ok');
    expect(p.drop_caches).not.toBe('ok');
    expect(p.sysrq === 'absent' || p.sysrq !== 'ok').toBe(true);
    expect(p.sys === 'absent' || (Array.isArray(p.sys) && p.sys.length === 0)).toBe(true);
    // and by a shell, the way the attack was made: a pipe to a workspace script, then a crash
    const out = await run(
      'printf \'#!/bin/sh\\ntouch /tmp/pwned\\n\' > h.sh; chmod +x h.sh; echo "|$PWD/h.sh" > /proc/sys/kernel/core_pattern && echo CORE-SET; mount -o remount,rw /proc/sys && echo REMOUNTED; echo 1 > /proc/sys/kernel/sysrq && echo SYSRQ-SET; true',
    );
    expect(out).not.toMatch(/CORE-SET|REMOUNTED|SYSRQ-SET/);
    expect(readFileSync('/proc/sys/kernel/core_pattern', 'utf8')).toBe(before);
  });

  it.runIf(x64)("gets a fresh session keyring: the server's keys are not listed, searchable or reachable", async () => {
    const canary = `rt-canary-${Math.random().toString(36).slice(2)}`;
    // a key in this server's own session keyring, as a host credential cache would put there
    const serial = hostPython(
      `import ctypes;l=ctypes.CDLL(None,use_errno=True);l.syscall.restype=ctypes.c_long;print(l.syscall(248,b"user",b"${canary}",b"secret",6,ctypes.c_long(-3)))`,
    );
    const hostSession = hostPython('import ctypes;l=ctypes.CDLL(None);l.syscall.restype=ctypes.c_long;print(l.syscall(250,0,ctypes.c_long(-3),0))');
    try {
      expect(Number(serial)).toBeGreaterThan(0);
      const p = await probe(canary);
      expect(String(p.proc_keys)).not.toContain(canary);
      expect(p.search_canary).not.toBe('ok');
      expect(typeof p.session_keyring).toBe('number');
      expect(String(p.session_keyring)).not.toBe(hostSession);
      // its own keyring works; the user's keyrings (shared by every run of the uid) and named ones do not
      expect(p.own_key).toBe('ok');
      expect(p.user_keyring).toBe('EPERM');
      expect(p.user_session_keyring).toBe('EPERM');
      expect(p.add_to_user_keyring).toBe('EPERM');
      expect(p.join_named).toBe('EPERM');
      expect(p.request_key).toBe('EPERM');
      // only keys of the sandbox's own uid are listed at all
      for (const line of String(p.proc_keys).trim().split('\n').filter(Boolean)) expect(line.split(/\s+/)[5]).toBe(String(expectedHostUid()));
    } finally {
      hostPython(`import ctypes;l=ctypes.CDLL(None);l.syscall(250,3,${Number(serial) || 0})`); // KEYCTL_REVOKE
    }
  });

  it.runIf(x64)(
    'has a seccomp filter: bpf, perf events, userfaultfd, io_uring, kexec, mount, handles, modules, the kernel log and ptrace attach fail',
    async () => {
      const p = await probe();
      expect(p.seccomp).toBe('2');
      for (const call of ['bpf', 'perf_event_open', 'userfaultfd', 'io_uring_setup', 'kexec_load', 'mount', 'open_by_handle_at', 'init_module', 'syslog'])
        expect([call, p[call]]).toEqual([call, 'EPERM']);
      expect(p.ptrace_attach).toBe('EPERM');
      expect(p.ptrace_seize).toBe('EPERM');
      // no user namespace of its own to gain capabilities in
      expect(p.unshare_user).not.toBe('ok');
      expect(p.chown_root).not.toBe('ok');
    },
  );

  it.runIf(x64)('keeps ordinary tracing: a child may ask to be traced', async () => {
    const p = await probe();
    expect(p.ptrace_traceme).toBe('ok');
  });

  it('cannot type into its terminal with TIOCSTI (pty session)', async () => {
    const out = await run(
      `python3 -c "import fcntl,termios,sys
try:
    fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('TYPED')
except OSError as e: print('refused', e.errno)"`,
      { pty: true },
    );
    expect(out).toContain('refused');
    expect(out).not.toContain('TYPED');
  });

  it('cannot nest a user namespace or mount (unshare -Ur, unshare -m)', async () => {
    const out = await run('unshare -Ur id && echo USERNS; unshare -m true && echo MOUNTNS; true');
    expect(out).not.toMatch(/USERNS|MOUNTNS/);
  });
});

describe('nothing the model chooses reaches the host side', () => {
  it('starts every host-side step with the fixed launch environment', async () => {
    const policy = resolveSandboxPolicy(undefined, {});
    if (policy.mode !== 'on') throw new Error('the default policy is on');
    const launch = await launchSandboxed(policy, {
      file: '/bin/true',
      args: [],
      cwd: ws,
      writable: [ws],
      env: { LD_PRELOAD: '/x.so', PATH: '/usr/bin' },
    });
    try {
      expect(launch.env).toEqual(LAUNCH_ENV);
      expect(JSON.stringify(launch.args)).not.toContain('/x.so');
    } finally {
      await launch.cleanup();
    }
  });

  it('applies LD_PRELOAD, BASH_ENV and other env from exec inside only: no host process loads or sees them', async () => {
    const cc = spawnSync('cc', ['--version'], { stdio: 'ignore' });
    expect(cc.status, 'a C compiler (scripts/ensure-sandbox-launcher.mjs installs one)').toBe(0);
    const hits = join(ws, 'preload-hits');
    // a library that records, each time it is loaded, the pid namespace of the process loading it
    writeFileSync(
      join(ws, 'evil.c'),
      `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void hit(void) {
  char ns[64] = {0};
  if (readlink("/proc/self/ns/pid", ns, sizeof ns - 1) < 0) return;
  FILE *f = fopen("${hits}", "a");
  if (f) { fprintf(f, "%s\\n", ns); fclose(f); }
}
`,
    );
    execFileSync('cc', ['-shared', '-fPIC', '-o', join(ws, 'evil.so'), join(ws, 'evil.c')]);
    writeFileSync(join(ws, 'bashenv.sh'), `echo bashenv >> ${hits}\n`);
    execFileSync('chmod', ['-R', 'a+rwX', ws]);
    const secret = `model-chosen-${Math.random().toString(36).slice(2)}`;
    const m = marker();
    const tool = exec();
    await tool.execute({
      command: `bash -c 'echo seen=$RT_MODEL_VAR'; sleep ${m}`,
      background: true,
      env: {
        LD_PRELOAD: join(ws, 'evil.so'),
        BASH_ENV: join(ws, 'bashenv.sh'),
        GCONV_PATH: join(ws, 'gconv'),
        LD_LIBRARY_PATH: ws,
        RT_MODEL_VAR: secret,
      },
    });
    expect(await eventually(() => liveProcesses(m).some((l) => l.trim().split(/\s+/)[3] === 'sleep'), 5_000)).toBe(true);
    const hostNs = readlinkSync('/proc/self/ns/pid');
    // every process on the host's pid namespace: none carries the model's variables
    const carriers: string[] = [];
    for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try {
        if (readlinkSync(`/proc/${pid}/ns/pid`) !== hostNs) continue;
        const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
        if (environ.includes(secret) || environ.includes('evil.so') || environ.includes('bashenv.sh')) carriers.push(pid);
      } catch {
        /* gone, or a kernel thread */
      }
    }
    expect(carriers).toEqual([]);
    const lines = readFileSync(hits, 'utf8').trim().split('\n');
    // it was applied inside (the test can fail) and never in a process of the host's namespace
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).not.toContain(hostNs);
  });
});
