/**
 * ProcessEventBuffer cost per push (ns) and how many events it lets through for
 * 1,000,000 pushes across 10 operations, against a baseline that forwards every event.
 */
import { ProcessEventBuffer } from '../src/events/process-event-buffer.js';
import { makeProcessEvent } from '../src/events/process-event-factory.js';
import type { RuntimeProcessEvent } from '../src/events/process-event.js';

const PUSHES = 1_000_000;
const OPS = 10;
const PER_OP = PUSHES / OPS;
/** One id string per operation, as an OperationReporter holds its id for all of its events. */
const IDS = Array.from({ length: OPS }, (_, op) => `op_${op}`);

function event(op: number, i: number): RuntimeProcessEvent {
  return makeProcessEvent(
    {
      operationId: IDS[op],
      targetType: 'skill',
      source: 'skill',
      stage: 'detect',
      status: i === PER_OP - 1 ? 'completed' : i === 0 ? 'started' : 'running',
      current: i + 1,
      total: PER_OP,
    },
    () => 0,
  );
}

/** All of one operation's events, then the next's: each push of the round-robin lands far in memory. */
function eventsByOperation(): RuntimeProcessEvent[][] {
  return Array.from({ length: OPS }, (_, op) => Array.from({ length: PER_OP }, (_, i) => event(op, i)));
}

/** Made in the order they are pushed, as a reporter makes each event just before it pushes it. */
function eventsInPushOrder(): RuntimeProcessEvent[][] {
  const evs = Array.from({ length: OPS }, () => new Array<RuntimeProcessEvent>(PER_OP));
  for (let i = 0; i < PER_OP; i++) for (let op = 0; op < OPS; op++) evs[op][i] = event(op, i);
  return evs;
}

type Side = 'forward' | 'read' | 'buffer';

async function once(evs: RuntimeProcessEvent[][], side: Side): Promise<{ ns: number; emitted: number }> {
  let emitted = 0;
  const emit = (): void => {
    emitted++;
  };
  const buffer = new ProcessEventBuffer({ emit });
  // 'read' forwards every event after reading the two fields a buffer must look at: the events are
  // made up front (a million of them), so reading them costs memory traffic the forward-all side skips
  const read = (e: RuntimeProcessEvent): void => {
    if (e.operationId.length === 0 || e.status === 'skipped') emitted--;
    emit();
  };
  const push = side === 'buffer' ? (e: RuntimeProcessEvent) => buffer.push(e) : side === 'read' ? read : emit;
  const t0 = process.hrtime.bigint();
  // Round-robin over operations, yielding now and then so the 400 ms timers can fire as in a real run.
  for (let i = 0; i < PER_OP; i++) {
    for (let op = 0; op < OPS; op++) push(evs[op][i]);
    if (i % 5_000 === 4_999) await new Promise((r) => setImmediate(r));
  }
  const ns = Number(process.hrtime.bigint() - t0) / PUSHES;
  buffer.dispose();
  return { ns, emitted };
}

async function measure(evs: RuntimeProcessEvent[][]): Promise<{ base: number; reads: number; buf: number; emitted: number }> {
  let base = Infinity;
  let reads = Infinity;
  let buf = Infinity;
  let emitted = 0;
  for (let round = 0; round < 3; round++) {
    base = Math.min(base, (await once(evs, 'forward')).ns);
    reads = Math.min(reads, (await once(evs, 'read')).ns);
    const r = await once(evs, 'buffer');
    if (r.ns < buf) {
      buf = r.ns;
      emitted = r.emitted;
    }
  }
  return { base, reads, buf, emitted };
}

export async function run(): Promise<void> {
  const { base, reads, buf, emitted } = await measure(eventsByOperation());
  console.log(`${PUSHES.toLocaleString('en-US')} pushes across ${OPS} operations (best of 3)`);
  console.log(`baseline (forward every event): ${base.toFixed(1)} ns/push`);
  console.log(`forward after reading operationId and status: ${reads.toFixed(1)} ns/push (the memory traffic of a million events made up front)`);
  console.log(`ProcessEventBuffer:             ${buf.toFixed(1)} ns/push  (${(buf / base).toFixed(1)}x baseline)`);
  console.log(`events emitted: ${emitted.toLocaleString('en-US')} of ${PUSHES.toLocaleString('en-US')} (${((emitted / PUSHES) * 100).toFixed(3)}%)`);
  // The same pushes with the events laid out in push order, as in a run, where a reporter pushes the
  // event it has just made: the row above pays a cache miss per push that a run does not.
  const inOrder = await measure(eventsInPushOrder());
  console.log(
    `events made in push order: ProcessEventBuffer ${inOrder.buf.toFixed(1)} ns/push, forward after reading ${inOrder.reads.toFixed(1)}, forward ${inOrder.base.toFixed(1)}; emitted ${inOrder.emitted.toLocaleString('en-US')}`,
  );
}
