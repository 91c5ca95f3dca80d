/** Runs a crash left live (RunService.init): who owns a run, and how an interrupted one is closed. */
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { AgentEvent } from '../../events/agent-event.js';
import { AgentEventBus } from '../../events/agent-event-bus.js';
import type { ArtifactContract } from '../agent.js';
import { EventStore, readEvents, repairEventsFile } from './event-store.js';
import { isTerminalRunEvent } from './event-tail.js';
import { endLeftoverProcesses } from '../../tools/process-ledger.js';
import { sessionOutputDirOf, takeSessionOutputs } from '../../tools/session-output-file.js';
import { publicDocuments } from './run-manifest.js';
import { RunStatusWriter } from './run-status-writer.js';
import { endRun, type EndingLog } from './run-ending.js';
import { RunFolder } from './run-folder.js';
import { RunWorkspace } from './run-workspace.js';
import type { RunStatusFile } from '../run-service-types.js';
import { interrupted } from '../errors.js';

/** Another live process (e.g. a server next to this CLI) still runs it: not a crash. */
export async function ownedByLiveProcess(runsDir: string, runId: string): Promise<boolean> {
  const owner = await new RunFolder(runsDir, runId).readOwner();
  try {
    if (!owner || typeof owner.pid !== 'number' || owner.pid === process.pid || owner.host !== hostname()) return false;
    process.kill(owner.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Ends a run a crash left live: failed with an `interrupted` diagnosis, through endRun. */
export async function markInterrupted(
  runsDir: string,
  status: RunStatusFile,
  contract: ArtifactContract[],
  why?: NonNullable<RunStatusFile['diagnosis']>,
): Promise<void> {
  const folder = new RunFolder(runsDir, status.run_id);
  const leftovers = await endLeftovers(folder.root);
  const file = folder.path('events');
  const { lastSeq } = repairEventsFile(file);
  if (await endedOnDisk(runsDir, status, contract)) return;
  // `why`: a run that was not resumed says why (its checkpoint, its agent, its resumes)
  const diagnosis = why
    ? { ...why, detail: [why.detail, leftovers].filter(Boolean).join('\n') }
    : interruption(status, 'the runtime stopped before it finished', leftovers);
  await endInterrupted(folder, status, contract, new EventStore(file), lastSeq, diagnosis, (s) => folder.writeStatus(s));
}

/**
 * A run that did end (its terminal event is on disk) but whose final status write was lost: its status
 * is taken from that event and written, rather than a second, contradicting ending. Whether it was.
 */
export async function endedOnDisk(runsDir: string, status: RunStatusFile, contract: ArtifactContract[]): Promise<boolean> {
  const folder = new RunFolder(runsDir, status.run_id);
  const file = folder.path('events');
  const { lastSeq } = repairEventsFile(file);
  const last = (await readEvents(file, Math.max(0, lastSeq - 1))).at(-1);
  if (!last || !isTerminalRunEvent(last) || last.stream !== 'run' || !('status' in last.data)) return false;
  const d = last.data as { status: 'completed' | 'failed' | 'cancelled'; content?: string; diagnosis?: RunStatusFile['diagnosis'] };
  const writer = new RunStatusWriter(status, (s) => folder.writeStatus(s));
  writer.ended({
    status: d.status,
    finished_at: status.finished_at ?? new Date(last.ts).toISOString(),
    final_answer: d.content ?? status.final_answer ?? '',
    diagnosis: d.diagnosis ?? null,
    last_seq: last.seq,
    ...(status.public_documents?.length ? {} : { public_documents: publicDocuments(await folder.listArtifacts(), contract) }),
  });
  await writer.save();
  return true;
}

/** The diagnosis of a run that was interrupted while it was live. */
function interruption(status: RunStatusFile, why: string, detail = ''): NonNullable<RunStatusFile['diagnosis']> {
  return interrupted(status.status, why, detail);
}

/** An interrupted run's ending: its state, the lifecycle error, run.failed, its files. */
async function endInterrupted(
  folder: RunFolder,
  status: RunStatusFile,
  contract: ArtifactContract[],
  log: EndingLog & { append(e: AgentEvent): void },
  lastSeq: number,
  diagnosis: NonNullable<RunStatusFile['diagnosis']>,
  saveStatus: (s: RunStatusFile) => Promise<void>,
): Promise<number> {
  const bus = new AgentEventBus({ runId: status.run_id, startSeq: lastSeq });
  bus.subscribe((e) => log.append(e));
  return endRun({
    folder,
    bus,
    log,
    status: new RunStatusWriter(status, saveStatus),
    outcome: { status: 'failed', text: status.final_answer ?? '', diagnosis },
    endedMs: Date.now(),
    contract,
    skill: status.skill ? { name: status.skill, version: '' } : null,
    usedSkills: status.skill ? [status.skill] : [],
    usedMcp: [],
    stateFrom: status.status,
  });
}

/** What a shared store (several nodes) offers to end a run whose worker died. */
export interface SharedRunIo {
  readEvents(runId: string, after: number): Promise<AgentEvent[]>;
  /** Adds events the dead worker wrote to the run's file but never committed. */
  insertEvents(runId: string, events: AgentEvent[]): Promise<void>;
  openLog(runId: string, root: string): EndingLog & { append(event: AgentEvent): void };
  /** Takes the run to its terminal status exactly once across the nodes; false when another did. */
  claimTerminal(status: RunStatusFile): Promise<boolean>;
  save(status: RunStatusFile, workspace: RunWorkspace): Promise<void>;
}

/**
 * The events of a run whose worker stopped, all committed: what it wrote to its run folder's file
 * and never committed (a batch on its way when it died) goes to the shared store, so the run's
 * events there have no gap whether it is ended or resumed. Returns them all, in seq order.
 */
export async function commitFileEvents(runsDir: string, runId: string, io: Pick<SharedRunIo, 'readEvents' | 'insertEvents'>): Promise<AgentEvent[]> {
  const file = new RunFolder(runsDir, runId).path('events');
  const committed = await io.readEvents(runId, 0);
  // a line the death cut short is no event: it is cut off, and the next one written goes on the line after
  const { lastSeq: fileLast } = repairEventsFile(file);
  const storeLast = committed.at(-1)?.seq ?? 0;
  if (fileLast <= storeLast) return committed;
  const missing = await readEvents(file, storeLast);
  await io.insertEvents(runId, missing);
  return [...committed, ...missing];
}

/**
 * A run whose worker died (a stalled job, a lost machine), ended by whichever node learns of it
 * first: failed as `interrupted`, with exactly one terminal event. Returns whether this node did it.
 */
export async function interruptInSharedStore(
  runsDir: string,
  status: RunStatusFile,
  contract: ArtifactContract[],
  io: SharedRunIo,
  why: string | NonNullable<RunStatusFile['diagnosis']>,
): Promise<boolean> {
  const folder = new RunFolder(runsDir, status.run_id);
  const committed = await commitFileEvents(runsDir, status.run_id, io);
  const last = committed.at(-1);
  if (last && isTerminalRunEvent(last)) return false; // it did finish: nothing to end
  // `why`: a sentence, or the diagnosis of a run the durability rules did not resume
  const diagnosis = typeof why === 'string' ? interruption(status, why) : why;
  const lastSeq = last?.seq ?? 0;
  // the claim takes the run to failed before any event is written; endRun then writes its final record
  const claimed: RunStatusFile = { ...status, status: 'failed', finished_at: new Date().toISOString(), diagnosis, last_seq: lastSeq };
  if (!(await io.claimTerminal(claimed))) return false;
  await endInterrupted(folder, { ...status }, contract, io.openLog(status.run_id, folder.root), lastSeq, diagnosis, (s) =>
    io.save(s, new RunWorkspace(runsDir, status.run_id)),
  );
  return true;
}

/**
 * Ends the process groups a dead runtime left running for this run (its runtime/processes.json);
 * returns the sentence the run's diagnosis carries, or '' when there were none.
 */
export async function endLeftovers(runRoot: string): Promise<string> {
  return (await endLeftoverSessions(runRoot)).text;
}

/**
 * Ends what a dead runtime left running for this run, like endLeftovers, and takes the last output
 * its background sessions wrote to runtime/session_output/ (bounded, masked): `output` is what the
 * model of a resumed run is told of each, '' when none printed anything.
 */
export async function endLeftoverSessions(runRoot: string): Promise<{ text: string; output: string }> {
  const ledger = RunFolder.at(runRoot).path('processes');
  const { ended, commands, sessions } = await endLeftoverProcesses(ledger).catch(() => ({
    ended: 0,
    commands: [] as string[],
    sessions: [] as Array<{ session_id: string; command: string }>,
  }));
  const outputs = takeSessionOutputs(sessionOutputDirOf(ledger));
  const short = (c: string) => (c.length > 80 ? `${c.slice(0, 79)}…` : c);
  const text = ended
    ? `ended ${ended} leftover process${ended === 1 ? '' : 'es'} (${commands.map(short).join('; ')})`
    : sessions.length
      ? `${sessions.length} background session${sessions.length === 1 ? '' : 's'} ended with the process (${sessions.map((s) => short(s.command)).join('; ')})`
      : '';
  const output = sessions
    .filter((s) => outputs.get(s.session_id)?.trim())
    .map((s) => `session ${s.session_id} (${short(s.command)}) printed last:\n${outputs.get(s.session_id)!.trimEnd()}`)
    .join('\n\n');
  return { text, output };
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

/**
 * A run whose status says it ended but whose terminal event never reached events.jsonl (the disk was
 * full when the store closed, or a crash fell between the two writes) gets that event, built from its
 * status, so every stream and replay of it ends with its done/error frame. Returns whether it wrote one.
 */
export async function completeTerminalEvent(runsDir: string, status: RunStatusFile, contract: ArtifactContract[]): Promise<boolean> {
  const ended = status.status;
  if (ended !== 'completed' && ended !== 'failed' && ended !== 'cancelled') return false;
  const folder = new RunFolder(runsDir, status.run_id);
  const file = folder.path('events');
  const last = await lastEventOf(file);
  if (last && isTerminalRunEvent(last)) return false;
  const { lastSeq } = repairEventsFile(file);
  const bus = new AgentEventBus({ runId: status.run_id, startSeq: lastSeq });
  const store = new EventStore(file);
  bus.subscribe((e) => store.append(e));
  await endRun({
    folder,
    bus,
    log: store,
    status: new RunStatusWriter(status, (s) => folder.writeStatus(s)),
    outcome: { status: ended, text: status.final_answer ?? '', diagnosis: status.diagnosis ?? null },
    endedMs: status.finished_at ? Date.parse(status.finished_at) : Date.now(),
    contract,
    skill: status.skill ? { name: status.skill, version: '' } : null,
    usedSkills: status.skill ? [status.skill] : [],
    usedMcp: [],
    lifecycle: false,
  });
  return true;
}
