/** A run's states and the moves between them (the documented transitions only). */
import type { RunStatus } from '../events/agent-event.js';
import type { PublishedEvent } from './run-publisher.js';

/** The documented transitions only; `cancelled` (and `failed`) are reachable from any live state. */
const NEXT: Record<RunStatus, readonly RunStatus[]> = {
  queued: ['created'],
  created: ['planning'],
  planning: ['model_thinking'],
  model_thinking: ['tool_executing', 'validating'],
  tool_executing: ['model_thinking', 'awaiting_approval'],
  // a tool call waits for a person's decision, then the batch goes on
  awaiting_approval: ['tool_executing'],
  // back to model_thinking only when stop_repair_turns hands the reasons to the model
  validating: ['completed', 'model_thinking'],
  completed: [],
  failed: [],
  cancelled: [],
};

export const TERMINAL_RUN_STATES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminalRunState(s: RunStatus): boolean {
  return TERMINAL_RUN_STATES.includes(s);
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  if (isTerminalRunState(from)) return false;
  if (to === 'cancelled' || to === 'failed') return true;
  return NEXT[from].includes(to);
}

/** The state an event of the loop puts its run in: a model call starting is the model thinking, a
 *  tool call starting is tools executing; any other event leaves the state as it is (null). */
export function loopStateAfter(e: PublishedEvent): 'model_thinking' | 'tool_executing' | null {
  if (e.stream === 'model' && e.data.phase === 'start') return 'model_thinking';
  if (e.stream === 'tool' && e.data.phase === 'start') return 'tool_executing';
  return null;
}

/** The states a resumed attempt can begin in: the one its first step implies (a model turn, the calls of
 *  the last turn to settle, or the final answer to validate again). */
export type ResumedEntry = 'model_thinking' | 'tool_executing' | 'validating';
const RESUMED_ENTRIES: readonly RunStatus[] = ['model_thinking', 'tool_executing', 'validating'];

export class RunStateError extends Error {
  constructor(
    readonly from: RunStatus,
    readonly to: RunStatus,
  ) {
    super(`illegal run state transition ${from} → ${to}`);
    this.name = 'RunStateError';
  }
}

export type StateListener = (from: RunStatus | null, to: RunStatus) => void;

/** Holds a run's state; every accepted change is handed to `onChange` (the engine publishes `run.state`). */
export class RunStateMachine {
  private current: RunStatus;
  private readonly enteredAt = new Map<RunStatus, number>();
  /** whether the machine has moved yet: a resumed entry is only its first move */
  private moved = false;
  /** milliseconds spent in each state, summed over visits */
  readonly durations: Partial<Record<RunStatus, number>> = {};

  constructor(
    initial: RunStatus = 'queued',
    private readonly onChange?: StateListener,
    private readonly clock: () => number = Date.now,
  ) {
    this.current = initial;
    this.enteredAt.set(initial, clock());
  }

  get state(): RunStatus {
    return this.current;
  }

  get isTerminal(): boolean {
    return isTerminalRunState(this.current);
  }

  /** Moves to `to`; throws RunStateError on a transition the table above does not allow. */
  transition(to: RunStatus): void {
    const from = this.current;
    if (!canTransition(from, to)) throw new RunStateError(from, to);
    this.move(from, to);
  }

  /**
   * The first move of a resumed attempt: it begins in the state its first step implies. The state it
   * starts from is the run's status on disk, which lags the state the dead process had reached (the
   * process can die before its last state change is written), so any live state is accepted as `from`;
   * every later move goes through `transition` and its table. Throws RunStateError once the machine
   * has moved, from a terminal state, or to a state no resumed attempt begins in.
   */
  enterResumed(to: ResumedEntry): void {
    const from = this.current;
    if (this.moved || isTerminalRunState(from) || !RESUMED_ENTRIES.includes(to)) throw new RunStateError(from, to);
    if (from === to) this.moved = true;
    else this.move(from, to);
  }

  private move(from: RunStatus, to: RunStatus): void {
    const now = this.clock();
    const since = this.enteredAt.get(from) ?? now;
    this.durations[from] = (this.durations[from] ?? 0) + (now - since);
    this.current = to;
    this.enteredAt.set(to, now);
    this.moved = true;
    this.onChange?.(from, to);
  }

  /** Like transition, but a no-op (returns false) when the move is not allowed. */
  tryTransition(to: RunStatus): boolean {
    if (!canTransition(this.current, to)) return false;
    this.transition(to);
    return true;
  }
}
