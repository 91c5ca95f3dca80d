/** Runtime process events: what a long tool, skill or the runtime is doing right now. */
export const PROCESS_TARGET_TYPES = ['tool', 'skill', 'subagent', 'task', 'runtime'] as const;
export const PROCESS_SOURCES = ['skill', 'tool', 'subagent', 'runtime'] as const;
export const PROCESS_STATUSES = ['queued', 'started', 'running', 'completed', 'failed', 'cancelled', 'skipped'] as const;
export const PROCESS_LEVELS = ['debug', 'info', 'warning', 'error'] as const;
export const TERMINAL_PROCESS_STATUSES = ['completed', 'failed', 'cancelled', 'skipped'] as const;

export type ProcessTargetType = (typeof PROCESS_TARGET_TYPES)[number];
export type ProcessSource = (typeof PROCESS_SOURCES)[number];
export type ProcessStatus = (typeof PROCESS_STATUSES)[number];
export type ProcessLevel = (typeof PROCESS_LEVELS)[number];

export interface RuntimeProcessEvent {
  operationId: string;
  parentOperationId?: string;
  targetType: ProcessTargetType;
  source: ProcessSource;
  stage?: string;
  status: ProcessStatus;
  level: ProcessLevel;
  current?: number;
  total?: number;
  percent?: number;
  message?: string;
  payload?: unknown;
  /** epoch milliseconds */
  ts: number;
}

export function isTerminalProcessStatus(status: ProcessStatus): boolean {
  return (TERMINAL_PROCESS_STATUSES as readonly string[]).includes(status);
}
