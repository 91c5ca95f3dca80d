/**
 * What the sandbox binds comes from the operator's configuration pinned before the run starts, never
 * from what a run wrote; and the operator's repositories stay the operator's. Each attack is a real
 * command in the real sandbox, planted between commands as a run that knows the code would; the
 * operator's own git then runs on the host and must run nothing the run put there.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { pinnedRunPolicy, pinSandboxPaths, runtrailDirs } from '../../src/sandbox/sandbox-paths.js';
import { resolveSandboxPolicy, type AgentSandboxSettings, type OperatorSandboxSettings, type SandboxPolicy } from '../../src/sandbox/sandbox-policy.js';
import { sandboxSupport } from '../../src/sandbox/sandbox-support.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';

const HOST_SECRET = `host-secret-${Math.random().toString(36).slice(2)}`;
let base: string;
let ws: string;
let hostDir: string;
let registry: ProcessRegistry | null = null;

beforeAll(() => {
  expect(sandboxSupport(), 'bubblewrap must be installed: npm test runs scripts/ensure-bubblewrap.mjs').toMatchObject({ ok: true });
});
afterEach(async () => {
  await registry?.shutdown();
  registry = null;
  rmSync(base, { recursive: true, force: true });
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

function setUp(): void {
  base = mkdtempSync(join(tmpdir(), 'rt-binds-'));
  ws = join(base, 'project', '.runtrail', 'runs', 'run_a');
  hostDir = join(base, 'host');
  mkdirSync(join(ws, 'runtime'), { recursive: true });
  mkdirSync(hostDir);
  writeFileSync(join(hostDir, 'secret.txt'), HOST_SECRET);
}

function pinned(operator: OperatorSandboxSettings = {}, agent: AgentSandboxSettings = {}): SandboxPolicy {
  const projectDir = join(base, 'project');
  const r = pinnedRunPolicy(operator, agent, { projectDir, protectedDirs: runtrailDirs(projectDir, join(projectDir, '.runtrail')), agentName: 'a' });
  if (!r.ok) throw new Error(r.refused.message);
  return r.policy;
}

/** The exec tool of one run: its workspace, plus workdirs the run's creator configured. */
function execOf(policy: SandboxPolicy, workdirs: string[] = []) {
  registry ??= new ProcessRegistry({ sandbox: policy });
  registry.sandboxScope('run_a', { policy, readOnlyInside: [join(ws, 'runtime'), join(ws, 'manifest.json')] });
  const exec = createExecTool({ registry, scopeKey: 'run_a', cwd: ws, allowedRoots: [ws, ...workdirs] });
  return async (command: string, workdir?: string) => {
    const r = await exec.execute({ command, ...(workdir ? { workdir } : {}) });
    return { ok: r.ok, out: r.content };
  };
}

/** The operator's repository with one commit, and a marker the operator's git would create if it ran the run's code. */
function operatorRepo(dir: string): { marker: string } {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' });
  git('init', '-q');
  writeFileSync(join(dir, 'a.txt'), 'a');
  git('add', 'a.txt');
  git('-c', 'user.email=o@p', '-c', 'user.name=op', 'commit', '-qm', 'one');
  return { marker: join(base, `operator-ran-it-${Math.random().toString(36).slice(2)}`) };
}

/** The operator's everyday git on the host, in `dir` (its output, or its error). */
function operatorGit(dir: string, ...args: string[]): string {
  try {
    return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  } catch (e) {
    return String((e as { stderr?: string }).stderr ?? e);
  }
}

describe('nothing a run controls becomes a bind', () => {
  it('a .git symlink the run plants in its workspace is never bound: the next command sees no host folder', async () => {
    setUp();
    const run = execOf(pinned());
    await run(`ln -s ${hostDir} .git; mkdir -p sub && ln -s ${hostDir} sub/.git; ln -s /proc/1 vendor.git`);
    const r = await run('cat .git/secret.txt sub/.git/secret.txt; ls /proc/1/root/ 2>&1 | head -3; echo end');
    expect(r.out).toContain('end');
    expect(r.out).not.toContain(HOST_SECRET);
  });

  it('a link planted where the run record will be (manifest.json) is not bound over a host file', async () => {
    setUp();
    const run = execOf(pinned());
    await run(`ln -s ${join(hostDir, 'secret.txt')} manifest.json; ln -s ${hostDir} runtime/x 2>/dev/null; echo planted`);
    const r = await run('cat manifest.json; echo end');
    expect(r.out).toContain('end');
    expect(r.out).not.toContain(HOST_SECRET);
  });

  it('a write path that did not exist when the run started and is then planted as a symlink is refused, not followed', async () => {
    setUp();
    const shared = join(base, 'project', 'shared');
    mkdirSync(shared);
    const later = join(shared, 'later');
    const run = execOf(pinned({ write: [shared, later] }));
    expect((await run(`ln -s ${hostDir} ${later} && echo planted`)).out).toContain('planted');
    const r = await run(`cat ${later}/secret.txt; echo end`);
    expect(r.out).not.toContain(HOST_SECRET);
    expect(r.out).toMatch(/now resolves to|could not start/);
    expect(readFileSync(join(hostDir, 'secret.txt'), 'utf8')).toBe(HOST_SECRET);
  });

  it('a configured workdir swapped for a symlink between commands is refused', async () => {
    setUp();
    const shared = join(base, 'project', 'shared');
    const wd = join(shared, 'wd');
    mkdirSync(wd, { recursive: true });
    const run = execOf(pinned({ write: [shared, wd] }), [wd]);
    expect((await run('echo first > f && echo ok', wd)).out).toContain('ok');
    // wd is a mount point in every sandbox of the run: it cannot be moved from inside
    expect((await run(`cd ${shared} && mv wd wd-gone && echo MOVED; echo end`)).out).not.toContain('MOVED');
    // swapped from elsewhere (another run's sandbox that does not bind it): the next command is refused
    rmSync(wd, { recursive: true, force: true });
    symlinkSync(hostDir, wd);
    const r = await run(`cat ${wd}/secret.txt; echo end`);
    expect(r.out).not.toContain(HOST_SECRET);
    expect(r.out).toMatch(/now resolves to/);
  });

  it('a workdir given with the run that holds the data dir (/, the project) is refused, the command never starts', async () => {
    setUp();
    const policy = pinned();
    const dataDir = join(base, 'project', '.runtrail');
    for (const workdir of ['/', join(base, 'project'), dataDir]) {
      registry ??= new ProcessRegistry({ sandbox: policy });
      registry.sandboxScope('run_w', { policy, protectedDirs: [dataDir] });
      const exec = createExecTool({ registry, scopeKey: 'run_w', cwd: ws, allowedRoots: [ws, workdir] });
      const r = await exec.execute({ command: `touch ${join(dataDir, 'config.json')} && echo WROTE`, workdir });
      expect(r.ok, workdir).toBe(false);
      expect(r.content).toMatch(/covers|lies inside/);
      expect(existsSync(join(dataDir, 'config.json'))).toBe(false);
    }
  });

  it('a folder another user owns in the workspace does not break commands (no scan reads it)', async () => {
    setUp();
    const theirs = join(ws, 'checkout');
    mkdirSync(join(theirs, '.git', 'hooks'), { recursive: true });
    chownSync(theirs, 4242, 4242);
    chownSync(join(theirs, '.git'), 4242, 4242);
    chmodSync(theirs, 0o700);
    const run = execOf(pinned());
    for (let i = 0; i < 3; i++) expect((await run('echo fine')).out).toContain('fine');
  });

  it('relative paths resolve against the project folder, whatever folder the CLI started in', () => {
    setUp();
    const project = join(base, 'project');
    const elsewhere = join(base, 'home');
    mkdirSync(elsewhere);
    const origin = process.cwd();
    process.chdir(elsewhere);
    try {
      const p = pinned({ write: ['out'], read: ['../host'] });
      if (p.mode !== 'on') throw new Error('off');
      expect(p.write).toEqual([join(project, 'out')]);
      expect(p.read).toEqual([hostDir]);
    } finally {
      process.chdir(origin);
    }
  });

  it('a path covering .runtrail, the data dir or a parent of them is refused, naming the field and value', () => {
    setUp();
    const project = join(base, 'project');
    const dataDir = join(base, 'data');
    mkdirSync(dataDir);
    symlinkSync(project, join(base, 'project-link'));
    const ctx = { projectDir: project, protectedDirs: runtrailDirs(project, dataDir), agentName: 'writer' };
    for (const [operator, agent, field] of [
      [{ write: ['.'] }, {}, 'config.json sandbox.write[0]'],
      [{ write: ['/tmp/x', base] }, {}, 'config.json sandbox.write[1]'],
      [{ read: [join(base, 'project-link')] }, {}, 'config.json sandbox.read[0]'],
      [{ write: ['.runtrail/runs'] }, {}, 'config.json sandbox.write[0]'],
      [{ write: [join(dataDir, 'uploads')] }, {}, 'config.json sandbox.write[0]'],
      [{}, { write: ['./'] }, 'agent writer sandbox.write[0]'],
      [{}, { write: ['src/../.runtrail'] }, 'agent writer sandbox.write[0]'],
    ] as Array<[OperatorSandboxSettings, AgentSandboxSettings, string]>) {
      const r = pinnedRunPolicy(operator, agent, ctx);
      expect(r.ok, JSON.stringify(operator)).toBe(false);
      if (!r.ok) {
        expect(r.refused.field).toBe(field);
        expect(r.refused.message).toContain(JSON.stringify(r.refused.value));
      }
    }
    expect(pinnedRunPolicy({ write: ['build'] }, { read: ['src'] }, ctx).ok).toBe(true);
  });

  it('runtrail validate names a config.json or agent sandbox path that reaches .runtrail; that agent does not load', async () => {
    setUp();
    const project = join(base, 'project');
    mkdirSync(join(project, '.runtrail', 'agents'), { recursive: true });
    writeFileSync(join(project, '.runtrail', 'config.json'), JSON.stringify({ sandbox: { write: ['build', '.'] } }));
    writeFileSync(
      join(project, '.runtrail', 'agents', 'greedy.md'),
      '---\nname: greedy\ndescription: wants the project\ntools: [exec]\nsandbox:\n  write: ["./.runtrail/../"]\n---\nDo it.\n',
    );
    const registry = await ExtensionRegistry.load({ projectDir: project, builtins: [], builtinSkillsDir: join(project, 'none') });
    const lines = registry.problems.map((p) => `${p.file} ${p.field}: ${p.message}`);
    expect(lines).toContainEqual(expect.stringMatching(/^\.runtrail\/config\.json sandbox\.write\[1\]: "\." \(.*\) covers .*\.runtrail/));
    expect(lines).toContainEqual(expect.stringMatching(/^\.runtrail\/agents\/greedy\.md sandbox\.write\[0\]: ".\/.runtrail\/..\/" .*covers/));
    expect(registry.get('greedy')).toBeUndefined();
  });

  it('paths are pinned: symlinks are resolved once, before the run', () => {
    setUp();
    const link = join(base, 'link-to-host');
    symlinkSync(hostDir, link);
    const r = pinSandboxPaths(resolveSandboxPolicy({ read: [link] }, undefined), { projectDir: base, protectedDirs: [] });
    expect(r.ok && r.policy.mode === 'on' && r.policy.read).toEqual([hostDir]);
  });
});

describe("the operator's repositories stay the operator's", () => {
  const ATTACKS = (marker: string) => [
    `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout && echo WROTE-HOOK`,
    `git config core.fsmonitor "touch ${marker}; false" && echo WROTE-CONFIG`,
    `printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' > /tmp/evil.cfg; mkdir -p /tmp/c && cp /tmp/evil.cfg /tmp/c/config; echo /tmp/c > .git/commondir && echo WROTE-COMMONDIR`,
    'mv .git .git-orig && echo MOVED-GIT',
    `rm -rf .git/hooks && echo REMOVED-HOOKS`,
    `git init -q . && git config core.fsmonitor "touch ${marker}; false" && echo REINIT`,
    `mkdir -p .git/info && echo '*.txt filter=x' > .git/info/attributes && echo WROTE-INFO`,
    `echo "[include]\\n\\tpath = ../evil.cfg" >> .git/config && echo APPENDED-INCLUDE`,
    `cd .git && ln -sf /tmp/evil.cfg config.worktree && echo WORKTREE-CONFIG`,
    `touch .git/index && echo TOUCHED-INDEX`,
  ];

  it('a configured workdir keeps its whole .git read-only: hooks, config, commondir, info, the folder itself', async () => {
    setUp();
    const wd = join(base, 'project', 'repo');
    const { marker } = operatorRepo(wd);
    const run = execOf(pinned({ write: [wd] }), [wd]);
    for (const attack of ATTACKS(marker)) {
      const r = await run(`${attack} 2>&1; echo end`, wd);
      expect(r.out, attack).toContain('end');
      expect(r.out, attack).not.toMatch(/WROTE-|MOVED-GIT|REMOVED-HOOKS|REINIT|APPENDED-INCLUDE|WORKTREE-CONFIG|TOUCHED-INDEX/);
    }
    // ordinary work in the workdir goes on: files are written, the repository is read
    expect((await run('echo b > b.txt && git status --short && git log --oneline | wc -l', wd)).out).toMatch(/\?\? b\.txt[\s\S]*\n1\n/);
    // the operator's own git on the host runs nothing the run put there
    operatorGit(wd, 'status');
    operatorGit(wd, 'checkout', '-q', '-b', 'next');
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(wd, '.git-orig'))).toBe(false);
    expect(existsSync(join(wd, '.git', 'commondir'))).toBe(false);
  });

  it("a file the operator's config includes from the workdir is read-only too; one missing there stops the sandbox", async () => {
    setUp();
    const wd = join(base, 'project', 'repo');
    const { marker } = operatorRepo(wd);
    writeFileSync(join(wd, 'team.gitconfig'), '[user]\n\tname = team\n');
    execFileSync('git', ['-C', wd, 'config', 'include.path', '../team.gitconfig']);
    execFileSync('git', ['-C', wd, 'config', `includeIf.gitdir:${wd}/.git.path`, `${wd}/cond.gitconfig`]);
    writeFileSync(join(wd, 'cond.gitconfig'), '');
    const run = execOf(pinned({ write: [wd] }), [wd]);
    const r = await run(
      `printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' >> team.gitconfig && echo WROTE-INCLUDED; printf '[core]\\n\\thooksPath = /tmp\\n' > cond.gitconfig && echo WROTE-COND; echo end`,
      wd,
    );
    expect(r.out).toContain('end');
    expect(r.out).not.toMatch(/WROTE-/);
    operatorGit(wd, 'status');
    expect(existsSync(marker)).toBe(false);

    // an include of a file that is not there yet, where the run could write it: no sandbox starts over it
    await registry?.shutdown();
    registry = null;
    const wd2 = join(base, 'project', 'repo2');
    operatorRepo(wd2);
    execFileSync('git', ['-C', wd2, 'config', 'include.path', '../not-yet.gitconfig']);
    const run2 = execOf(pinned({ write: [wd2] }), [wd2]);
    const r2 = await run2('touch not-yet.gitconfig && echo CREATED', wd2);
    expect(r2.out).not.toContain('CREATED');
    expect(r2.out).toMatch(/not-yet\.gitconfig/);
    expect(existsSync(join(wd2, 'not-yet.gitconfig'))).toBe(false);
  });

  it("a worktree's .git pointer file cannot be redirected", async () => {
    setUp();
    const main = join(base, 'main-repo');
    operatorRepo(main);
    const wt = join(base, 'project', 'wt');
    execFileSync('git', ['-C', main, 'worktree', 'add', '-q', wt], { stdio: 'ignore' });
    const run = execOf(pinned({ write: [wt] }), [wt]);
    const before = readFileSync(join(wt, '.git'), 'utf8');
    const r = await run(`echo "gitdir: /tmp/evil" > .git && echo REDIRECTED; rm -f .git && echo REMOVED; echo end`, wt);
    expect(r.out).toContain('end');
    expect(r.out).not.toMatch(/REDIRECTED|REMOVED/);
    expect(readFileSync(join(wt, '.git'), 'utf8')).toBe(before);
  });

  it('a .git the run replaced from a sandbox of its own before the guard (a second run on the same workdir) stops the sandbox, it is not bound', async () => {
    setUp();
    const wd = join(base, 'project', 'repo');
    operatorRepo(wd);
    const run = execOf(pinned({ write: [wd] }), [wd]);
    expect((await run('echo ok', wd)).out).toContain('ok');
    // the host-side swap stands for another run's sandbox that did not guard this repository
    rmSync(join(wd, '.git'), { recursive: true, force: true });
    symlinkSync(hostDir, join(wd, '.git'));
    const r = await run('cat .git/secret.txt; echo end', wd);
    expect(r.out).not.toContain(HOST_SECRET);
    expect(r.out).toMatch(/not the one there when the run started/);
  });

  it('git commit in a repository of the run (its workspace) keeps working', async () => {
    setUp();
    const run = execOf(pinned());
    const r = await run(
      'git init -q . && echo a > a && git add a && git -c user.email=a@b -c user.name=a commit -qm one && echo b > b && git add b && git -c user.email=a@b -c user.name=a commit -qm two && git log --oneline | wc -l',
    );
    expect(r.out, r.out).toMatch(/\n?2\n/);
    const again = await run('echo c > c && git add c && git -c user.email=a@b -c user.name=a commit -qm three && git log --oneline | wc -l');
    expect(again.out).toMatch(/\n?3\n/);
  });
});
