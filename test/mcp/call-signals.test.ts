/**
 * Call signals (McpConnection's calls, fetchOnOwnSignal's requests): thousands of calls on one
 * Streamable HTTP connection leave no abort listener behind on the signals that outlive a call: the transport's own signal (undici keeps a listener per request on
 * the signal fetch is given, until the request is garbage-collected) and a caller's signal handed
 * to every call (the SDK adds a listener per request and never removes it).
 */
import { getEventListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchOnOwnSignal } from '../../src/mcp/fetch-on-own-signal.js';
import { McpConnection } from '../../src/mcp/mcp-connection.js';
import { marker } from '../tools/helpers.js';
import { serverConfig, startEverythingHttp, type HttpServer } from './helpers.js';

const CALLS = 3_000;
const BATCH = 100;
/** A few requests may be in flight or not yet collected when counted; a leak is one per call. */
const FLAT = 10;

let server: HttpServer | null = null;
const closers: (() => Promise<void>)[] = [];
let warnings: string[] = [];
const onWarning = (w: Error): void => {
  if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
};
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(async () => {
  process.off('warning', onWarning);
  for (const close of closers.splice(0)) await close();
  await server?.stop();
  server = null;
});

const abortListeners = (s: AbortSignal): number => getEventListeners(s, 'abort').length;

/** The signal the SDK's transport hands every fetch (its AbortController lives as long as the transport). */
const transportSignal = (t: StreamableHTTPClientTransport): AbortSignal => (t as any)._abortController.signal;

/** `CALLS` echo calls in batches of `BATCH`; the listener count after each thousand. */
async function countsOver(call: (i: number) => Promise<unknown>, count: () => number): Promise<number[]> {
  const counts: number[] = [];
  for (let b = 0; b < CALLS / BATCH; b++) {
    await Promise.all(Array.from({ length: BATCH }, (_, i) => call(b * BATCH + i)));
    if (((b + 1) * BATCH) % 1_000 === 0) counts.push(count());
  }
  return counts;
}

describe('abort listeners over thousands of calls on one Streamable HTTP connection', () => {
  it("McpConnection: neither the caller's long-lived signal nor the transport's gains a listener per call", async () => {
    server = await startEverythingHttp('streamableHttp', marker());
    const c = await McpConnection.open(serverConfig('everything', { type: 'http', url: server.url }), { killGraceMs: 500 });
    closers.push(() => c.close());
    const run = new AbortController();
    const transport = (c as any).transport as StreamableHTTPClientTransport;
    let mostOnRun = 0;
    const counts = await countsOver(
      (i) => {
        const called = c.callTool('echo', { message: `m${i}` }, { signal: run.signal });
        mostOnRun = Math.max(mostOnRun, abortListeners(run.signal));
        return called;
      },
      () => abortListeners(run.signal) + abortListeners(transportSignal(transport)),
    );
    // one listener on the run's signal while its calls are in flight, none after
    expect(mostOnRun).toBe(1);
    for (const n of counts) expect(n).toBeLessThanOrEqual(FLAT);
    expect(abortListeners(run.signal)).toBe(0);
    expect(warnings).toEqual([]);
    // the run's cancel still reaches a call in flight
    const long = c.callTool('trigger-long-running-operation', { duration: 5, steps: 5 }, { signal: run.signal });
    run.abort(new Error('run cancelled'));
    await expect(long).rejects.toThrow();
  }, 120_000);

  it("a bare SDK Client fetching with fetchOnOwnSignal (the bench's baseline) keeps its transport's signal flat", async () => {
    server = await startEverythingHttp('streamableHttp', marker());
    const transport = new StreamableHTTPClientTransport(new URL(server.url), { fetch: fetchOnOwnSignal });
    const bare = new Client({ name: 'bare', version: '1' });
    await bare.connect(transport);
    closers.push(() => bare.close());
    const counts = await countsOver(
      (i) => bare.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
      () => abortListeners(transportSignal(transport)),
    );
    for (const n of counts) expect(n).toBeLessThanOrEqual(FLAT);
    expect(warnings).toEqual([]);
  }, 120_000);
});
