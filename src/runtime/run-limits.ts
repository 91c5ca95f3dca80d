/** What a run may spend: turns, tool calls, time, and the waits it may make. */
export interface RunLimits {
  max_iterations: number; // 20
  max_tool_calls: number; // 60
  timeout_s: number; // 600
  stop_repair_turns: number; // 0
  /** Overrides the model's context window from the catalog (tokens); absent: the catalog's. */
  context_tokens?: number;
  /** How long an `ask` tool call waits for a person before it counts as denied; default 600. */
  approval_timeout_s?: number;
}
