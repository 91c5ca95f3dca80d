/**
 * A run a worker claimed from a shared queue after the worker that ran it stopped (SIGKILL, a lost
 * machine, a drain that ran out): under the same rules as one process (the agent's `durability`, the
 * operator's `durability.resume`, `max_resumes`) it is either taken up from its checkpoint in the
 * shared store, by exactly one node, or ended `interrupted` saying why. Either way the events the dead
 * worker wrote only to its file are committed first, so the run's events go on with no gap.
 */
import { join } from 'node:path';
import { maskSecrets } from '../../events/secret-masker.js';
import type { ArtifactContract } from '../agent.js';
import { checkpointsInLines } from '../checkpoint/checkpoint-store.js';
import { commitFileEvents, endLeftoverSessions, interruptInSharedStore, type SharedRunIo } from '../storage/interrupted-runs.js';
import type { RunRecord } from '../run/run-record.js';
import { resumePointOf } from '../checkpoint/resume-point.js';
import { leftoversRecord } from '../checkpoint/run-checkpoint.js';
import { planResume, type DurabilitySettings, type ResumeDecision } from './run-resume.js';
import type { RunStatusFile } from '../run-service-types.js';
import type { RunStore } from '../storage/run-store.js';

/** What a shared store must offer for its runs to be resumed on another node. */
export type ResumingStore = RunStore & Required<Pick<RunStore, 'checkpoints' | 'claimResume' | 'claimTerminal' | 'insertEvents'>>;

export function canResumeShared(store: RunStore): store is ResumingStore {
  return Boolean(store.checkpoints && store.claimResume && store.claimTerminal && store.insertEvents);
}

/** What the shared store offers to end a run (interruptInSharedStore). */
export function sharedIo(store: ResumingStore): SharedRunIo {
  return {
    readEvents: (id, after) => store.readEvents(id, after),
    insertEvents: (id, events) => store.insertEvents(id, events),
    openLog: (id, root) => store.openLog(id, root),
    claimTerminal: (s) => store.claimTerminal(s),
    save: (s, ws) => store.save(s, ws),
  };
}

export type SharedTakeUp =
  /** this node takes it up: from its checkpoint, or (it died before its first) from its start */
  | { kind: 'take up'; durability: RunRecord['durability']; decision: ResumeDecision }
  /** ended here as interrupted (the rules said so: `decision`), or found ended, or another node took it */
  | { kind: 'not resumed'; decision?: ResumeDecision };

export async function takeUpSharedRun(
  runsDir: string,
  status: RunStatusFile,
  o: { store: ResumingStore; settings: DurabilitySettings; agentDurability: 'resume' | 'interrupt' | undefined | null; contract: ArtifactContract[] },
): Promise<SharedTakeUp> {
  const runId = status.run_id;
  const root = join(runsDir, runId);
  const io = sharedIo(o.store);
  const committed = await commitFileEvents(runsDir, runId, io);
  const checkpoints = checkpointsInLines(o.store.checkpoints);
  const d = await planResume(root, status, {
    settings: o.settings,
    agentDurability: o.agentDurability,
    source: {
      checkpoint: async () => resumePointOf(await checkpoints.read(runId, root), checkpoints.where(runId, root)),
      events: async () => committed,
    },
  });
  if (d.kind === 'interrupt') {
    await interruptInSharedStore(runsDir, status, o.contract, io, d.diagnosis);
    return { kind: 'not resumed', decision: d };
  }
  // one node takes up this attempt, whoever else heard the worker died
  if (!(await o.store.claimResume(runId, d.attempt))) return { kind: 'not resumed' };
  // what the dead worker left running on this host ends before the run goes on (the model is told)
  const now = await endLeftoverSessions(root);
  if (now.text || now.output) await checkpoints.note(runId, root, leftoversRecord(now.text, now.output), maskSecrets);
  const told = d.kind === 'resume' ? d.point : d.start;
  const leftovers = [...told.leftovers, now.text].filter(Boolean).join('; ');
  const leftoverOutput = [...told.leftoverOutput, now.output].filter(Boolean).join('\n\n');
  return {
    kind: 'take up',
    decision: d,
    durability: d.kind === 'resume' ? { checkpoint: true, resume: { ...d, leftovers, leftoverOutput } } : { checkpoint: true, restart: { ...d, leftovers } },
  };
}
