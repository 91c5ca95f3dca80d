/** Runs a crash left live (RunService.init): who owns a run, and how an interrupted one is closed. */
import { open, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, RunStatus } from '../events/agent-event.js';
import { AgentEventBus } from '../events/agent-event-bus.js';
import { Diagnosis } from '../events/diagnosis.js';
import type { ArtifactContract } from './business-plugin.js';
import { EVENTS_FILE, EventStore, readEvents, repairEventsFile } from './event-store.js';
import { isTerminalRunEvent } from './event-tail.js';
import { PROCESS_LEDGER_FILE } from './run-engine.js';
import { writeTrace } from './trace-file.js';
import { endLeftoverProcesses } from '../tools/process-ledger.js';
import { publicDocuments, type RunManifest } from './run-manifest.js';
import type { RunStatusFile } from './run-service-types.js';
import { RunWorkspace } from './run-workspace.js';
import type { RunEventLog } from './run-store.js';

/** Marks the run as this process's, so another process's init() does not take it for a crash. */
export async function writeOwner(ws: RunWorkspace): Promise<void> {
  await ws.writeRunJson('runtime/owner.json', { pid: process.pid, host: hostname() });
}

/** Another live process (e.g. a server next to this CLI) still runs it: not a crash. */
export async function ownedByLiveProcess(runsDir: string, runId: string): Promise<boolean> {
  try {
    const owner = JSON.parse(await readFile(join(runsDir, runId, 'runtime', 'owner.json'), 'utf8')) as { pid?: unknown; host?: unknown };
    if (typeof owner.pid !== 'number' || owner.pid === process.pid || owner.host !== hostname()) return false;
    process.kill(owner.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Ends a run a crash left live: failed with an `interrupted` diagnosis, a terminal event, status, manifest, trace. */
export async function markInterrupted(runsDir: string, status: RunStatusFile, contract: ArtifactContract[]): Promise<void> {
  const ws = new RunWorkspace(runsDir, status.run_id);
  const leftovers = await endLeftovers(ws.root);
  const file = join(ws.root, EVENTS_FILE);
  const { lastSeq } = repairEventsFile(file);
  // the run did end (its terminal event is on disk) but its final status write was lost: take the
  // outcome from that event rather than appending a second, contradicting terminal event
  const last = (await readEvents(file, Math.max(0, lastSeq - 1))).at(-1);
  if (last && isTerminalRunEvent(last) && last.stream === 'run' && 'status' in last.data) {
    const d = last.data as { status: RunStatus; content?: string; diagnosis?: RunStatusFile['diagnosis'] };
    Object.assign(status, {
      status: d.status,
      finished_at: status.finished_at ?? new Date(last.ts).toISOString(),
      final_answer: d.content ?? status.final_answer ?? '',
      diagnosis: d.diagnosis ?? null,
      last_seq: last.seq,
    });
    if (!status.public_documents?.length) status.public_documents = publicDocuments(await ws.listArtifacts(), contract);
    await ws.writeRunJson('runtime/run_status.json', status);
    return;
  }
  const bus = new AgentEventBus({ runId: status.run_id, startSeq: lastSeq });
  const store = new EventStore(file);
  bus.subscribe((e) => store.append(e));
  const diagnosis = new Diagnosis({
    code: 'interrupted',
    severity: 'error',
    summary: `run was interrupted while ${status.status} (the runtime stopped before it finished)`,
    ...(leftovers ? { detail: leftovers } : {}),
    hint: 'start the run again',
  }).toDict();
  const now = Date.now();
  publishInterruption(bus, status, diagnosis, now);
  Object.assign(status, { status: 'failed' as RunStatus, finished_at: new Date(now).toISOString(), diagnosis, last_seq: bus.lastSeq });
  store.close();
  // the rest of a failed run's files, from what the crashed run left
  status.public_documents = publicDocuments(await ws.listArtifacts(), contract);
  const manifest: RunManifest = {
    run_id: status.run_id,
    status: 'failed',
    plugin: { name: status.plugin, version: status.plugin_version },
    skill: status.skill ? { name: status.skill, version: '' } : null,
    provider: status.provider,
    model: status.model,
    created_at: status.created_at,
    finished_at: status.finished_at,
    documents: status.public_documents,
  };
  await ws.writeRunJson('manifest.json', manifest).catch(() => undefined);
  await writeTrace(ws.root, status.run_id).catch(() => undefined);
  await ws.writeRunJson('runtime/run_status.json', status);
}

/** The three events that end an interrupted run: its state, the lifecycle error, the terminal run.failed. */
function publishInterruption(bus: AgentEventBus, status: RunStatusFile, diagnosis: RunStatusFile['diagnosis'] & object, now: number): void {
  bus.publish('run', { type: 'run.state', from: status.status, to: 'failed' });
  bus.publish('lifecycle', { phase: 'error', endedAt: now, diagnosis });
  bus.publish('run', {
    type: 'run.failed',
    status: 'failed',
    messageId: status.run_id,
    conversationId: status.conversation_id,
    content: status.final_answer ?? '',
    usedSkills: status.skill ? [status.skill] : [],
    usedMcp: [],
    diagnosis,
  });
}

/** What a shared store (several nodes) offers to end a run whose worker died. */
export interface SharedRunIo {
  readEvents(runId: string, after: number): Promise<AgentEvent[]>;
  /** Adds events the dead worker wrote to the run's file but never committed. */
  insertEvents(runId: string, events: AgentEvent[]): Promise<void>;
  openLog(runId: string, root: string): RunEventLog;
  /** Takes the run to its terminal status exactly once across the nodes; false when another did. */
  claimTerminal(status: RunStatusFile): Promise<boolean>;
  save(status: RunStatusFile, ws: RunWorkspace): Promise<void>;
}

/**
 * A run whose worker died (a stalled job, a lost machine), ended by whichever node learns of it
 * first: failed as `interrupted`, with exactly one terminal event. Returns whether this node did it.
 */
export async function interruptInSharedStore(runsDir: string, status: RunStatusFile, contract: ArtifactContract[], io: SharedRunIo, why: string): Promise<boolean> {
  const ws = new RunWorkspace(runsDir, status.run_id);
  const file = join(ws.root, EVENTS_FILE);
  let committed = await io.readEvents(status.run_id, 0);
  // what the worker wrote to its file but did not commit belongs to the run too
  const { lastSeq: fileLast } = repairEventsFile(file);
  const pgLast = committed.at(-1)?.seq ?? 0;
  if (fileLast > pgLast) {
    const missing = await readEvents(file, pgLast);
    await io.insertEvents(status.run_id, missing);
    committed = [...committed, ...missing];
  }
  const last = committed.at(-1);
  if (last && isTerminalRunEvent(last)) return false; // it did finish: nothing to end
  const diagnosis = new Diagnosis({ code: 'interrupted', severity: 'error', summary: `run was interrupted while ${status.status} (${why})`, hint: 'start the run again' }).toDict();
  const lastSeq = last?.seq ?? 0;
  const now = Date.now();
  const failed: RunStatusFile = { ...status, status: 'failed', finished_at: new Date(now).toISOString(), diagnosis, last_seq: lastSeq + 3 };
  if (!(await io.claimTerminal(failed))) return false;
  const bus = new AgentEventBus({ runId: status.run_id, startSeq: lastSeq });
  const log = io.openLog(status.run_id, ws.root);
  bus.subscribe((e) => log.append(e));
  publishInterruption(bus, status, diagnosis, now);
  log.close();
  await log.settled?.();
  failed.public_documents = publicDocuments(await ws.listArtifacts(), contract);
  await ws.writeRunJson('manifest.json', { run_id: failed.run_id, status: 'failed', plugin: { name: failed.plugin, version: failed.plugin_version }, skill: failed.skill ? { name: failed.skill, version: '' } : null, provider: failed.provider, model: failed.model, created_at: failed.created_at, finished_at: failed.finished_at, documents: failed.public_documents } satisfies RunManifest).catch(() => undefined);
  await writeTrace(ws.root, failed.run_id).catch(() => undefined);
  await io.save(failed, ws);
  return true;
}

/**
 * Ends the process groups a dead runtime left running for this run (its runtime/processes.json);
 * returns the sentence the run's diagnosis carries, or '' when there were none.
 */
export async function endLeftovers(runRoot: string): Promise<string> {
  const { ended, commands } = await endLeftoverProcesses(join(runRoot, PROCESS_LEDGER_FILE)).catch(() => ({ ended: 0, commands: [] as string[] }));
  if (ended === 0) return '';
  const what = commands.map((c) => (c.length > 80 ? `${c.slice(0, 79)}…` : c)).join('; ');
  return `ended ${ended} leftover process${ended === 1 ? '' : 'es'} (${what})`;
}

/** The last complete event of events.jsonl, read from the file's end only (init does this for every run). */
async function lastEventOf(file: string): Promise<AgentEvent | null> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch {
    return null;
  }
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n');
    // a torn last line (no newline yet) is not an event: repairEventsFile cuts it
    const line = lines.length > 1 ? lines[lines.length - 2] : '';
    return line ? (JSON.parse(line) as AgentEvent) : null;
  } catch {
    return null;
  } finally {
    await fh.close();
  }
}

const TERMINAL_TYPE = { completed: 'run.completed', failed: 'run.failed', cancelled: 'run.cancelled' } as const;

/**
 * A run whose status says it ended but whose terminal event never reached events.jsonl (the disk was
 * full when the store closed, or a crash fell between the two writes) gets that event, built from its
 * status, so every stream and replay of it ends with its done/error frame. Returns whether it wrote one.
 */
export async function completeTerminalEvent(runsDir: string, status: RunStatusFile): Promise<boolean> {
  if (status.status !== 'completed' && status.status !== 'failed' && status.status !== 'cancelled') return false;
  const file = join(runsDir, status.run_id, EVENTS_FILE);
  const last = await lastEventOf(file);
  if (last && isTerminalRunEvent(last)) return false;
  const { lastSeq } = repairEventsFile(file);
  const bus = new AgentEventBus({ runId: status.run_id, startSeq: lastSeq });
  const store = new EventStore(file);
  bus.subscribe((e) => store.append(e));
  bus.publish('run', {
    type: TERMINAL_TYPE[status.status],
    status: status.status,
    messageId: status.run_id,
    conversationId: status.conversation_id,
    content: status.final_answer ?? '',
    usedSkills: status.skill ? [status.skill] : [],
    usedMcp: [],
    ...(status.diagnosis ? { diagnosis: status.diagnosis } : {}),
  });
  store.close();
  status.last_seq = bus.lastSeq;
  await new RunWorkspace(runsDir, status.run_id).writeRunJson('runtime/run_status.json', status);
  return true;
}
