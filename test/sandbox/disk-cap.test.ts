/**
 * A run's processes together may add only so much to the disk: with a cap of a few MiB, preallocated,
 * sparse, tmp and many small files are attacked in the real sandbox; what is written stops at about
 * the cap, the command is ended with the cap's diagnosis, and the run's next command is refused
 * while it stays over. Small sizes only: nothing here writes more than a few tens of MiB.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { allocatedBytes } from '../../src/sandbox/disk-budget.js';
import { resolveSandboxPolicy } from '../../src/sandbox/sandbox-policy.js';
import { sandboxSupport } from '../../src/sandbox/sandbox-support.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';

const MiB = 1024 * 1024;
let base: string;
let ws: string;
let registry: ProcessRegistry | null = null;

beforeAll(() => {
  expect(sandboxSupport(), 'bubblewrap must be installed: npm test runs scripts/ensure-bubblewrap.mjs').toMatchObject({ ok: true });
});
afterEach(async () => {
  await registry?.shutdown();
  registry = null;
  rmSync(base, { recursive: true, force: true });
});

function execWithCap(diskMb: number) {
  base = mkdtempSync(join(tmpdir(), 'rt-disk-'));
  ws = join(base, 'run');
  mkdirSync(ws);
  const policy = resolveSandboxPolicy({ limits: { disk_mb: diskMb } }, undefined);
  registry = new ProcessRegistry({ sandbox: policy });
  registry.sandboxScope('run_d', { policy });
  const exec = createExecTool({ registry, scopeKey: 'run_d', cwd: ws });
  return (command: string) => exec.execute({ command, timeout: 60 });
}

describe("a run's disk use is capped", () => {
  it('fallocate of 1 GiB five times fills nothing: no file may exceed the cap', async () => {
    const run = execWithCap(4);
    const r = await run('for i in 1 2 3 4 5; do fallocate -l 1G big$i 2>&1 || echo REFUSED; done; truncate -s 1G sparse 2>&1 || echo REFUSED-SPARSE; echo end');
    expect(r.content).toContain('end');
    expect(r.content.match(/REFUSED/g)?.length).toBe(6);
    expect(await allocatedBytes([ws])).toBeLessThan(5 * MiB);
  });

  it('a loop of 1 MiB files is stopped near the cap with a diagnosis, and the next command is refused', async () => {
    const run = execWithCap(4);
    // unstopped it would write 40 MiB; a writer slower than the measurement interval is stopped near
    // the cap (a burst faster than one measurement overshoots by what it wrote meanwhile: the next
    // command is then refused, as the test below of many small files checks)
    const r = await run('i=0; while [ $i -lt 40 ]; do i=$((i+1)); fallocate -l 1M f$i || exit 9; sync f$i; sleep 0.05; done; echo WROTE-ALL');
    const stopped = r.diagnosis?.code === 'sandbox_disk_cap';
    const next = await run('echo next-ran');
    // stopped during the command, or (it was quicker than a measurement) the run's next command is refused
    expect(stopped || /disk cap/.test(next.content), `${r.content}\n---\n${next.content}`).toBe(true);
    if (stopped) expect(r.content).toMatch(/over its disk cap of 4\.0 MiB \(sandbox\.limits\.disk_mb\)/);
    expect(next.content).not.toContain('next-ran');
    expect(next.content).toMatch(/disk cap/);
    expect(readdirSync(ws).length).toBeLessThan(40);
  });

  it('many small files count by the blocks they take', async () => {
    const run = execWithCap(2);
    const r = await run('i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo x > s$i; done; sync; echo WROTE-ALL');
    const next = await run('echo next-ran');
    expect(r.diagnosis?.code === 'sandbox_disk_cap' || /disk cap/.test(next.content), `${r.content}\n---\n${next.content}`).toBe(true);
    expect(next.content).not.toContain('next-ran');
  });

  it("the sandbox's /tmp is no larger than the cap", async () => {
    const run = execWithCap(4);
    const r = await run('head -c 3145728 /dev/zero > /tmp/a && echo FIRST-OK; head -c 3145728 /dev/zero > /tmp/b && echo SECOND-OK; df -k /tmp | tail -1');
    expect(r.content).toContain('FIRST-OK');
    expect(r.content).not.toContain('SECOND-OK');
  });

  it('sparse files within the cap and ordinary work go on', async () => {
    const run = execWithCap(8);
    const r = await run('truncate -s 6M sparse && head -c 1048576 /dev/zero > real && node -e "console.log(6*7)" && echo ok');
    expect(r.ok, r.content).toBe(true);
    expect(r.content).toContain('42');
    expect((await run('echo again')).content).toContain('again');
  });
});
