/**
 * Whether a run whose process died is resumed, and from where: its checkpoint, the events it
 * published after the last checkpoint (the work that is redone, whose partial text is discarded),
 * the attempts so far against the limit, and the agent's and the operator's say.
 */
import { join } from 'node:path';
import type { AgentEvent } from '../../events/agent-event.js';
import type { DiagnosisDict } from '../../events/diagnosis.js';
import { readEvents } from '../storage/event-store.js';
import { RUN_FILES } from '../storage/run-files.js';
import { loadCheckpoint, type LoadedCheckpoint, type ResumePoint, type StartPoint } from '../checkpoint/resume-point.js';
import type { TokenCounts } from '../metrics/run-metrics.js';
import { notResumed } from '../errors.js';

/** The operator's settings (config.json `durability`). */
export interface DurabilitySettings {
  /** false: every run whose process died ends `interrupted`, as before checkpoints */
  resume: boolean;
  /** a run resumed this many times that dies again ends `interrupted` (it must not loop) */
  max_resumes: number;
}

export const DEFAULT_DURABILITY: DurabilitySettings = { resume: true, max_resumes: 3 };

/** What the dead attempt did after its last checkpoint, that the resumed one redoes. */
export interface LostWork {
  /** model turns whose answer was not checkpointed (redone) */
  turns: number;
  tokens: TokenCounts;
  /** null when a lost turn had no known price */
  costUsd: number | null;
  /** the first assistant or reasoning delta of the redone turn: from it to the resume they are discarded */
  discardFromSeq: number | null;
}

export type ResumeDecision =
  | { kind: 'resume'; point: ResumePoint; attempt: number; lost: LostWork; lastSeq: number; usedMs: number }
  /** it died before its loop began: it starts again from its request, its events go on after `lastSeq` */
  | { kind: 'restart'; start: StartPoint; attempt: number; lastSeq: number; usedMs: number }
  | { kind: 'interrupt'; diagnosis: DiagnosisDict };

function interrupted(status: string, why: string, detail = ''): ResumeDecision {
  return { kind: 'interrupt', diagnosis: notResumed(status, why, detail) };
}

/** What a resume is decided from: the run's checkpoint and its durable events. */
export interface ResumeSource {
  checkpoint(): Promise<LoadedCheckpoint>;
  events(): Promise<AgentEvent[]>;
}

/** One process: the run folder's checkpoint.jsonl and events.jsonl. */
export function fileResumeSource(runRoot: string): ResumeSource {
  return {
    checkpoint: async () => loadCheckpoint(join(runRoot, RUN_FILES.checkpoint)),
    events: () => readEvents(join(runRoot, RUN_FILES.events), 0),
  };
}

/** Decides for one run whose owner died. `agentDurability` is the agent's declaration, if the agent is known;
 *  `source`: where its checkpoint and events are read (default the run folder's files). */
export async function planResume(
  runRoot: string,
  run: { status: string },
  o: { settings: DurabilitySettings; agentDurability: 'resume' | 'interrupt' | undefined | null; source?: ResumeSource },
): Promise<ResumeDecision> {
  const source = o.source ?? fileResumeSource(runRoot);
  if (!o.settings.resume) return interrupted(run.status, 'resuming runs is turned off (config.json durability.resume)');
  if (o.agentDurability === null) return interrupted(run.status, 'its agent is not available here');
  if (o.agentDurability === 'interrupt') return interrupted(run.status, 'its agent says durability: interrupt');
  const loaded = await source.checkpoint();
  if (!loaded.ok) return interrupted(run.status, loaded.summary, loaded.detail);
  const at = loaded.point ?? loaded.start;
  const resumes = at.resumes;
  // a run that kills its process every time must not loop; a stop on purpose (a deploy) is no crash
  // and is not counted, neither the one just past nor earlier ones
  if (!at.left && at.crashResumes >= o.settings.max_resumes) {
    const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;
    return interrupted(
      run.status,
      at.crashResumes === 0
        ? `durability.max_resumes is ${o.settings.max_resumes}`
        : `it was resumed ${times(at.crashResumes)} already after its process died (durability.max_resumes ${o.settings.max_resumes}) and its process died again`,
    );
  }
  const after = await source.events();
  const lastSeq = after.at(-1)?.seq ?? 0;
  if (!loaded.point) {
    // nothing to lose: the run starts again; its clock counts the time it spent starting before
    const began = after.find((e) => e.stream === 'lifecycle' && e.data.phase === 'start')?.ts;
    const usedMs = began === undefined ? 0 : Math.max(0, (after.at(-1)?.ts ?? began) - began);
    return { kind: 'restart', start: loaded.start, attempt: resumes + 1, lastSeq, usedMs };
  }
  const point = loaded.point;
  const lastTs = after.at(-1)?.ts ?? point.at;
  return {
    kind: 'resume',
    point,
    attempt: point.resumes + 1,
    lost: lostAfter(after.filter((e) => e.seq > point.seq)),
    lastSeq,
    // the run's clock counts up to its last sign of life, not the time it lay dead
    usedMs: point.usedMs + Math.max(0, lastTs - point.at),
  };
}

function lostAfter(events: AgentEvent[]): LostWork {
  const lost: LostWork = { turns: 0, tokens: { input: 0, output: 0, cached_input: 0, cache_write: 0, reasoning: 0 }, costUsd: 0, discardFromSeq: null };
  for (const e of events) {
    if (e.stream === 'model' && e.data.phase === 'end') {
      lost.turns++;
      const t = e.data.tokens;
      if (t) for (const k of Object.keys(lost.tokens) as Array<keyof TokenCounts>) lost.tokens[k] += t[k] ?? 0;
      if (e.data.costUsd === null && t) lost.costUsd = null;
      else if (lost.costUsd !== null) lost.costUsd += e.data.costUsd ?? 0;
    } else if (e.stream === 'model' && e.data.phase === 'start' && !events.some((x) => x.stream === 'model' && x.data.phase === 'end' && x.seq > e.seq)) {
      // a turn cut off mid-stream has a start and no end: it counts, its tokens unknown
      lost.turns++;
    }
    if ((e.stream === 'assistant' || e.stream === 'reasoning') && lost.discardFromSeq === null) lost.discardFromSeq = e.seq;
  }
  return lost;
}
