/** events.jsonl when the disk fills up and frees again: nothing lost, no torn line glued to the next. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const disk = { mode: 'ok' as 'ok' | 'full' | 'partial', writes: 0 };
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    writeSync: (fd: number, data: string | Uint8Array, ...rest: unknown[]) => {
      disk.writes++;
      if (disk.mode === 'full') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      if (disk.mode === 'partial') {
        disk.mode = 'full'; // the disk fills up in the middle of this line
        const buf = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
        return real.writeSync(fd, buf.subarray(0, Math.floor(buf.length / 2)));
      }
      return (real.writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
    },
  };
});

const { AgentEventBus } = await import('../../../src/events/agent-event-bus.js');
const { EventStore, parseEventLines } = await import('../../../src/runtime/storage/event-store.js');
const { tailRunEvents } = await import('../../../src/runtime/storage/event-tail.js');

let dir: string | null = null;
afterEach(() => {
  disk.mode = 'ok';
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

/** A run's bus with its events.jsonl store subscribed, in a fresh folder. */
function storeOnBus() {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-enospc-'));
  const file = join(dir, 'events.jsonl');
  const bus = new AgentEventBus({ runId: 'r' });
  const store = new EventStore(file);
  bus.subscribe((e) => store.append(e));
  return { file, bus, store };
}

const burstWritten = () => new Promise<void>((r) => queueMicrotask(r));

describe('EventStore on a full disk', () => {
  it('a burst of publishes (up to 512) is one write, made before any reader can see the burst', async () => {
    const { file, bus, store } = storeOnBus();
    const onDiskWhenSeen: number[] = [];
    bus.subscribe(() => void Promise.resolve().then(() => onDiskWhenSeen.push(store.written)));
    disk.writes = 0;
    for (let i = 0; i < 500; i++) bus.publish('assistant', { text: '', delta: 'x' });
    expect(store.unwritten(0)).toHaveLength(500);
    await burstWritten();
    expect(disk.writes).toBe(1);
    expect(store.written).toBe(500);
    // every asynchronous reader of the burst ran after the write
    await new Promise((r) => setImmediate(r));
    expect(onDiskWhenSeen.every((n) => n === 500)).toBe(true);
    store.close();
    expect(parseEventLines(readFileSync(file, 'utf8'))).toHaveLength(500);
  });

  it('a burst whose write the disk cuts in the middle is finished whole once it has room', async () => {
    const { file, bus, store } = storeOnBus();
    bus.publish('run', { type: 'notice', text: 'one' });
    await burstWritten();
    disk.mode = 'partial';
    bus.publish('run', { type: 'notice', text: 'two, cut in the middle' });
    bus.publish('run', { type: 'notice', text: 'three, in the same write' });
    await burstWritten();
    expect(store.unwritten(0).map((e) => e.seq)).toEqual([2, 3]);
    bus.publish('run', { type: 'notice', text: 'four, refused' });
    await burstWritten();
    disk.mode = 'ok';
    bus.publish('run', { type: 'notice', text: 'five' });
    await burstWritten();
    expect(store.unwritten(0)).toEqual([]);
    store.close();
    const text = readFileSync(file, 'utf8');
    expect(parseEventLines(text).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(text.trim().split('\n')).toHaveLength(5);
  });

  it('keeps the lines it could not write and writes them, whole and in order, once the disk has room again', () => {
    const { file, bus, store } = storeOnBus();
    bus.publish('run', { type: 'notice', text: 'one' });
    disk.mode = 'partial';
    bus.publish('run', { type: 'notice', text: 'two, cut in the middle' });
    bus.publish('run', { type: 'notice', text: 'three, refused' });
    disk.mode = 'ok';
    bus.publish('run', { type: 'notice', text: 'four' });
    store.close();
    const text = readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(parseEventLines(text).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(text.trim().split('\n')).toHaveLength(4);
    expect(store.lastSeq).toBe(4);
  });

  it('close() writes what is still pending when the disk has room by then', () => {
    const { file, bus, store } = storeOnBus();
    disk.mode = 'full';
    bus.publish('run', { type: 'notice', text: 'one' });
    disk.mode = 'ok';
    store.close();
    expect(parseEventLines(readFileSync(file, 'utf8')).map((e) => e.seq)).toEqual([1]);
  });

  it('a live reader that joins while the disk is full gets the held-back events too: no gap, no hang', async () => {
    const { file, bus, store } = storeOnBus();
    bus.publish('run', { type: 'notice', text: 'one' });
    disk.mode = 'full';
    bus.publish('run', { type: 'notice', text: 'two, held back' });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const e of tailRunEvents({ file, after: 0, bus, unwritten: (n) => store.unwritten(n) })) seen.push(e.seq);
    })();
    await new Promise((r) => setTimeout(r, 20));
    bus.publish('run', { type: 'run.completed', status: 'completed', messageId: 'r', conversationId: 'r', content: '', usedSkills: [], usedMcp: [] });
    const r = await Promise.race([reading.then(() => 'ended'), new Promise((res) => setTimeout(() => res('hung'), 500))]);
    expect(r).toBe('ended');
    expect(seen).toEqual([1, 2, 3]);
    disk.mode = 'ok';
    store.close();
  });

  it('a reader that joins after the terminal event was held back does not wait forever', async () => {
    const { file, bus, store } = storeOnBus();
    disk.mode = 'full';
    bus.publish('run', { type: 'run.completed', status: 'completed', messageId: 'r', conversationId: 'r', content: '', usedSkills: [], usedMcp: [] });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const e of tailRunEvents({ file, after: 0, bus, unwritten: (n) => store.unwritten(n) })) seen.push(e.seq);
    })();
    const r = await Promise.race([reading.then(() => 'ended'), new Promise((res) => setTimeout(() => res('hung'), 500))]);
    expect(r).toBe('ended');
    expect(seen).toEqual([1]);
    disk.mode = 'ok';
    store.close();
  });
});
