/** Nothing lost when things break: disk errors, throwing hooks, many runs in a row. */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import type { RunService } from '../../src/runtime/run-service.js';
import { RunWorkspace } from '../../src/runtime/run-workspace.js';
import { goodTurns } from './fixtures/fake-plugin.js';
import { FakeProvider } from './fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from './fixtures/setup.js';

let env: TestEnv;
let svc: RunService | null = null;
beforeEach(() => {
  env = makeEnv();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await svc?.close();
  svc = null;
  env.cleanup();
});

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
}

/** open file descriptors of this process that point into the test's data dir */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed while listing
    }
  }
  return out;
}

describe.skipIf(process.platform !== 'linux')('RunService: a create that fails on disk', () => {
  it('closes the events file it opened when writing the request fails (no fd leak per refused run)', async () => {
    svc = makeService(env, new FakeProvider(goodTurns()));
    await svc.init();
    const real = RunWorkspace.prototype.writeRunJson;
    vi.spyOn(RunWorkspace.prototype, 'writeRunJson').mockImplementation(function (this: RunWorkspace, rel: string, value: unknown) {
      if (rel === 'input/request.json') return Promise.reject(enospc());
      return real.call(this, rel, value);
    });
    for (let i = 0; i < 5; i++) {
      await expect(svc.create({ plugin: 'notes', input: { notes_path: env.notesPath } })).rejects.toThrow(/ENOSPC/);
    }
    expect(openFilesUnder(env.dataDir)).toEqual([]);
    expect(svc.stats().running + svc.stats().queueDepth).toBe(0);
  });
});
