/**
 * The agent loop a run starts: its first messages (history and the goal with its image inputs, or the
 * conversation a resumed run goes on with), its compactor, its checkpoint begun, and a resumed or
 * restarted attempt announced, in the state its first step implies.
 */
import { appendFile } from 'node:fs/promises';
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import { maskSecrets } from '../../events/secret-masker.js';
import { modelInfo } from '../../providers/model-catalog.js';
import type { ModelProvider } from '../../providers/model-provider.js';
import { AgentLoop } from '../loop/agent-loop.js';
import type { TextFilter } from '../loop/agent-turn.js';
import { Compactor, providerSummarizer } from '../loop/compaction.js';
import { inputImages } from '../loop/input-images.js';
import type { PlanProgress } from '../loop/plan-progress.js';
import { restartedEvent, resumedEntry, resumedEvent, resumeLoop } from './resumed-attempt.js';
import type { PublishFn } from '../run-publisher.js';
import type { RunRecord } from './run-record.js';
import type { RunScope } from './run-scope.js';
import type { ToolExecutor } from '../loop/tool-executor.js';

/** What of the engine's dependencies the loop uses. */
export interface LoopDeps {
  processRegistry?: { drainNotices(runId: string): string[] };
  createTextFilter?: () => TextFilter;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
}

export async function startAgentLoop(
  rec: RunRecord,
  deps: LoopDeps,
  run: RunScope,
  o: { progress: PlanProgress; executor: ToolExecutor; system: string },
): Promise<AgentLoop> {
  const { resume, restart, metrics, publish, checkpoint, provider } = run;
  const { progress, executor, system } = o;
  // image file inputs (uploads) go to the model with the goal
  const goalImages = resume ? { notes: [], images: [] } : await inputImages(rec.workspace.root, rec.input, rec.plugin.fileInputs);
  const resumed = resume ? resumeLoop(resume, executor, rec) : null;
  if (restart) rec.inbox.restore(restart.start.queued);
  // a call the dead attempt finished is not run again and publishes nothing: its result counts here
  for (const c of resumed?.calls ?? []) if (c.outcome === 'recorded') metrics.recordTool(c.name, resume?.point.calls.get(c.id)?.result?.ok ?? false, 0);
  const loop = new AgentLoop({
    compactor: compactorFor(rec, { provider, system, publish, planState: () => planText(progress), runReporter: run.runReporter }),
    inbox: rec.inbox,
    provider,
    system,
    messages: resumed
      ? resumed.messages
      : [
          ...rec.history,
          { role: 'user', content: [rec.goal, ...goalImages.notes].join('\n'), ...(goalImages.images.length ? { images: goalImages.images } : {}) },
        ],
    ...(resumed ? { resume: resumed.loop } : {}),
    executor,
    publish,
    limits: rec.limits,
    reasoning: rec.reasoning ?? 'off',
    // one key per run: every turn of the loop shares the stable prefix (system prompt + tools)
    cacheKey: `runtrail-${rec.runId}`,
    signal: rec.abort.signal,
    ...(deps.processRegistry ? { drainNotices: () => deps.processRegistry!.drainNotices(rec.runId) } : {}),
    ...(deps.createTextFilter ? { createTextFilter: deps.createTextFilter } : {}),
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
    ...(deps.backoffMs ? { backoffMs: deps.backoffMs } : {}),
    ...(checkpoint ? { onStep: checkpoint.onStep } : {}),
  });
  checkpoint?.begin(system, () => ({
    messages: loop.messages,
    loop: loop.counters(),
    metrics: metrics.snapshot(),
    turns: metrics.takeNewLines(),
    ...(rec.provider.position ? { provider: rec.provider.position() } : {}),
    plan: progress.state(),
  }));
  if (resume && resumed) {
    publish('lifecycle', resumedEvent(resume, resumed));
    // the status on disk may lag the state the dead process had reached: the attempt begins in the
    // state its first step implies, whatever that status says
    rec.machine.enterResumed(resumedEntry(resumed));
  }
  if (restart) publish('lifecycle', restartedEvent(restart));
  return loop;
}

/** A compactor when the context window is known (limits.context_tokens, else the model's); else none. */
function compactorFor(
  rec: RunRecord,
  o: { provider: ModelProvider; system: string; publish: PublishFn; planState: () => string; runReporter: OperationReporter | null },
): Compactor | undefined {
  const window = rec.limits.context_tokens ?? modelInfo(rec.provider.provider, rec.provider.model)?.contextWindow ?? null;
  if (!window) return undefined;
  const log = rec.workspace.folder.path('compactions');
  return new Compactor({
    system: o.system,
    window,
    goalIndex: rec.history.length,
    summarize: providerSummarizer(o.provider),
    planState: o.planState,
    publish: o.publish,
    reporter: (n) => o.runReporter?.child({ operationId: `${rec.runId}.compaction.${n}`, targetType: 'runtime', source: 'runtime' }),
    log: (entry) => appendFile(log, maskSecrets(`${JSON.stringify(entry)}\n`)),
  });
}

/** The plan's todos as the compaction summary keeps them. */
function planText(progress: PlanProgress): string {
  return progress
    .state()
    .todos.map((t) => `- [${t.status === 'completed' ? 'x' : ' '}] ${t.title} (${t.status})`)
    .join('\n');
}
