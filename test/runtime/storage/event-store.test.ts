/** events.jsonl's store: every line on disk when close() returns; the fsync and close happen off the main thread. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const calls: string[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    fsync: (fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      calls.push('fsync');
      real.fsync(fd, cb);
    },
    close: (fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      calls.push('close');
      real.close(fd, cb);
    },
  };
});

const { AgentEventBus } = await import('../../../src/events/agent-event-bus.js');
const { EventStore, parseEventLines } = await import('../../../src/runtime/storage/event-store.js');

let dir: string | null = null;
afterEach(() => {
  calls.length = 0;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('EventStore.close', () => {
  it('writes every line before it returns; settled() resolves once the file is synced and closed; later events are not part of the run', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-store-'));
    const file = join(dir, 'events.jsonl');
    const bus = new AgentEventBus({ runId: 'r' });
    const store = new EventStore(file);
    bus.subscribe((e) => store.append(e));
    for (let i = 0; i < 5; i++) bus.publish('assistant', { phase: 'update', text: `t${i}`, delta: `t${i}` });
    store.close();
    expect(parseEventLines(readFileSync(file, 'utf8')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(calls).toEqual(['fsync']); // started, not awaited on the main thread
    await store.settled();
    expect(calls).toEqual(['fsync', 'close']);
    bus.publish('assistant', { phase: 'update', text: 'late', delta: 'late' });
    store.close();
    await store.settled();
    expect(parseEventLines(readFileSync(file, 'utf8'))).toHaveLength(5);
    expect(calls).toEqual(['fsync', 'close']);
  });
});
