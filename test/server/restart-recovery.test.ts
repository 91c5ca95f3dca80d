import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postJson, readSse } from './helpers.js';

const child = join(import.meta.dirname, 'fixtures', 'serve-child.mjs');
const children: ChildProcess[] = [];
let dataDir = '';

beforeAll(() => {
  // The child runs the built package (npm test builds first); build it when run alone.
  if (!existsSync('dist/src/server/start-server.js') || !existsSync('dist/src/runtime/service/run-service.js')) {
    spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  }
}, 120_000);

afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.length = 0;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function serve(dir: string): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [child, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      const line = buf.split('\n')[0];
      if (buf.includes('\n')) resolve({ url: (JSON.parse(line) as { url: string }).url, proc });
    });
    proc.on('exit', (code) => reject(new Error(`server child exited early (${code})`)));
  });
}

describe('restart recovery', () => {
  it('a run live when the server is killed comes back failed/interrupted with a terminal frame (torn last line repaired), keeping every frame clients saw', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'runtrail-restart-'));
    const first = await serve(dataDir);
    const { body } = await postJson(`${first.url}/api/runs`, { plugin: 'talk', input: {} });
    const runId = body.run_id as string;
    const seen = await readSse(`${first.url}/api/runs/${runId}/events`, {
      stopWhen: (r) => r.events.filter((e) => JSON.parse(e.data).type === 'delta').length >= 20,
    });
    first.proc.kill('SIGKILL');
    await new Promise((r) => first.proc.once('exit', r));
    // a crash mid-append leaves a torn last line
    appendFileSync(join(dataDir, 'runs', runId, 'runtime', 'events.jsonl'), '{"runId":"' + runId + '","seq":99999,"ts":1,"stream":"assis');

    const second = await serve(dataDir);
    const status = await getJson(`${second.url}/api/runs/${runId}`);
    expect(status.body.status).toBe('failed');
    expect(status.body.diagnosis.code).toBe('interrupted');

    const replay = await readSse(`${second.url}/api/runs/${runId}/events`);
    // nothing a client saw is lost or changed: the live frames are a prefix of the replay
    expect(replay.raw.startsWith(seen.raw)).toBe(true);
    const ids = replay.events.map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(ids.length);
    const last = JSON.parse(replay.events.at(-1)!.data);
    expect(last.type).toBe('error');
    expect(last.diagnosis.code).toBe('interrupted');
    // and a client resuming from what it saw gets exactly the rest
    const resumed = await readSse(`${second.url}/api/runs/${runId}/events`, { headers: { 'last-event-id': seen.events.at(-1)!.id! } });
    expect(seen.events.concat(resumed.events).map((e) => e.id)).toEqual(replay.events.map((e) => e.id));
  });
});
