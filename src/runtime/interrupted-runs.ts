/** Runs a crash left live (RunService.init): who owns a run, and how an interrupted one is closed. */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RunStatus } from '../events/agent-event.js';
import { AgentEventBus } from '../events/agent-event-bus.js';
import { Diagnosis } from '../events/diagnosis.js';
import type { ArtifactContract } from './business-plugin.js';
import { EVENTS_FILE, EventStore, repairEventsFile } from './event-store.js';
import { writeTrace } from './run-engine.js';
import { publicDocuments, type RunManifest } from './run-manifest.js';
import type { RunStatusFile } from './run-service-types.js';
import { RunWorkspace } from './run-workspace.js';

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
  const file = join(ws.root, EVENTS_FILE);
  const { lastSeq } = repairEventsFile(file);
  const bus = new AgentEventBus({ runId: status.run_id, startSeq: lastSeq });
  const store = new EventStore(file);
  bus.subscribe((e) => store.append(e));
  const diagnosis = new Diagnosis({
    code: 'interrupted',
    severity: 'error',
    summary: `run was interrupted while ${status.status} (the runtime stopped before it finished)`,
    hint: 'start the run again',
  }).toDict();
  const now = Date.now();
  bus.publish('run', { type: 'run.state', from: status.status, to: 'failed' });
  bus.publish('lifecycle', { phase: 'error', endedAt: now, diagnosis });
  Object.assign(status, { status: 'failed' as RunStatus, finished_at: new Date(now).toISOString(), diagnosis, last_seq: bus.lastSeq + 1 });
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
