/**
 * The names of a run folder's files, and nothing else: the one table every reader and writer of a run
 * folder goes by (RunFolder, the event store, the model-call record, the trace). It imports nothing, so
 * the lowest modules can use it.
 */

/** The folders of a run: input/ (what it was given), runtime/ (the runtime's record), artifacts/ (what it made). */
export const RUN_DIRS = ['input', 'runtime', 'artifacts'] as const;

/** Every file the runtime keeps in a run folder, relative to the folder. */
export const RUN_FILES = {
  /** the request as sent and what was resolved from it (a worker rebuilds the run from this) */
  request: 'input/request.json',
  /** every event of the run, one JSON line each: the source of replay */
  events: 'runtime/events.jsonl',
  /** the run's status record */
  status: 'runtime/run_status.json',
  /** which process runs it (pid, host): a live owner's run is not a crash */
  owner: 'runtime/owner.json',
  metrics: 'runtime/metrics.json',
  /** one line per model call (tokens, latency) */
  modelTurns: 'runtime/model_turns.jsonl',
  /** what each model call was sent and answered */
  modelCalls: 'runtime/model_calls.jsonl',
  /** images and files the model calls carried, by content hash (a folder) */
  modelCallFiles: 'runtime/model_call_files',
  /** the tool lists model_calls.jsonl refers to by id */
  modelTools: 'runtime/model_tools.json',
  resolvedConfig: 'runtime/resolved_config.json',
  skillActivation: 'runtime/skill_activation.json',
  systemPrompt: 'runtime/system_prompt.md',
  agentPlan: 'runtime/agent_plan.json',
  todoState: 'runtime/todo_state.json',
  /** the process groups the run's sessions lead, while they run */
  processes: 'runtime/processes.json',
  compactions: 'runtime/compactions.jsonl',
  /** what a resumed run continues from: its conversation, counters and tool-call journal (checksummed records) */
  checkpoint: 'runtime/checkpoint.jsonl',
  /** a flat projection of events.jsonl, written when the run ends */
  trace: 'runtime/trace.jsonl',
  /** completion webhook attempts */
  webhooks: 'runtime/webhooks.jsonl',
  /** written last: the run's outcome and its public documents */
  manifest: 'manifest.json',
} as const;

export type RunFile = keyof typeof RUN_FILES;
