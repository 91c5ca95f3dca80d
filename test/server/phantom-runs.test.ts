/** A request that fails leaves no run behind: bad input is refused before a run exists, and a failure
 *  while a run is being made takes every record of it away (no phantom `queued` run in /metrics). */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import { startRealServer, type RealTestServer } from './helpers.js';

let server: RealTestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(): Promise<string> {
  const plugin = createTextOnlyPlugin({ name: 'talk', description: 'takes any input', inputSchema: z.object({}).passthrough(), offlineAnswer: 'hi' });
  server = await startRealServer({ agents: [plugin] });
  return server.url;
}

function deep(levels: number): string {
  let s = '1';
  for (let i = 0; i < levels; i++) s = `{"a":${s}}`;
  return s;
}

const queued = async (url: string) => Number(/runtrail_runs\{state="queued"\} (\d+)/.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
const runFolders = () => (existsSync(join(server!.dataDir, 'runs')) ? readdirSync(join(server!.dataDir, 'runs')) : []);

describe('no phantom runs', () => {
  it('input nested 2,500 deep gets a 400 naming where, 110 times over, and no run is made', async () => {
    const url = await start();
    for (let i = 0; i < 110; i++) {
      const r = await fetch(`${url}/api/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"plugin":"talk","input":{"x":${deep(2500)}}}`,
      });
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error: { code: string; message: string; details: { issues: Array<{ path: string }> } } };
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message).toContain('nested more than 64 levels deep');
      expect(body.error.details.issues[0].path).toMatch(/^input\.x\.a\.a\.a\.a\.….a$/);
    }
    expect(await queued(url)).toBe(0);
    expect(runFolders()).toEqual([]);
    // 64 levels are fine
    const ok = await fetch(`${url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"plugin":"talk","input":${deep(63)}}`,
    });
    expect(ok.status).toBe(201);
  });

  it('a run whose request file cannot be written leaves no record: not in the list, not in the counts, no folder', async () => {
    await start();
    await expect(server!.service.create({ plugin: 'talk', input: { big: 10n } })).rejects.toThrow(/BigInt/);
    expect(server!.service.stats().byState.queued ?? 0).toBe(0);
    expect((await server!.service.list()).total).toBe(0);
    expect(runFolders()).toEqual([]);
  });
});
