/** Everything the service and engine hold for one live run. */
import type { AgentEventBus } from '../../events/agent-event-bus.js';
import type { ApprovalBroker } from '../loop/approvals.js';
import type { RunInbox } from '../loop/run-inbox.js';
import type { RunMetrics } from '../metrics/run-metrics.js';
import type { ChatMessage, ModelProvider, ReasoningEffort } from '../../providers/model-provider.js';
import type { LoadedSkill } from '../../skills/skill-loader.js';
import type { AnyToolDefinition } from '../../tools/tool.js';
import type { ToolSource } from '../../tools/tool-source.js';
import type { Agent } from '../agent.js';
import type { RunEventLog } from '../storage/run-store.js';
import type { ResolvedRunCapabilities } from './run-capabilities.js';
import type { RunLimits, RunStatusFile } from '../run-service-types.js';
import type { RunStateMachine } from '../run-state-machine.js';
import type { RunWorkspace } from '../storage/run-workspace.js';
import type { RequestFile } from '../storage/run-folder.js';
import type { RunStatusWriter } from '../storage/run-status-writer.js';
import type { ResolvedCapture } from '../model-calls/capture-settings.js';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy.js';
import type { ModelCallFeed } from '../model-calls/model-call-feed.js';
import type { RestartStart, ResumeStart } from './resumed-attempt.js';

export interface RunRecord {
  runId: string;
  // the plugin's Input type is erased here; its schema validated `input`
  plugin: Agent<Record<string, unknown>>;
  input: Record<string, unknown>;
  goal: string;
  conversationId: string;
  tenantId: string | null;
  skill: LoadedSkill | null;
  /** The plugin's granted Agent Skills (listed in the prompt, loaded with load_skill). */
  grantedSkills: LoadedSkill[];
  provider: ModelProvider;
  limits: RunLimits;
  /** What the run records of its model calls (runtime/model_calls.jsonl). */
  capture: ResolvedCapture;
  /** How its processes are sandboxed (resolved_config.json says it). */
  sandbox: SandboxPolicy;
  /** Its model calls as they are recorded (the spans' message attributes). */
  modelCalls: ModelCallFeed;
  /** The request's reasoning effort, handed to the provider each turn; absent: off. */
  reasoning?: ReasoningEffort;
  workspace: RunWorkspace;
  bus: AgentEventBus;
  store: RunEventLog;
  machine: RunStateMachine;
  /** The run's status as it is now; every change goes through `statusWriter`. */
  readonly status: Readonly<RunStatusFile>;
  /** The one writer of `status` (run_status.json): state changes, start, subagents, the end. */
  statusWriter: RunStatusWriter;
  history: ChatMessage[];
  tools: AnyToolDefinition[];
  /** Tools known once connected (MCP servers), opened by the engine before the first model turn. */
  toolSources?: ToolSource[];
  capabilities: ResolvedRunCapabilities;
  /** input/request.json as written */
  request: RequestFile;
  abort: AbortController;
  createdAtMs: number;
  /** resolves when the run reached a terminal state and every file is written */
  done: Promise<RunStatusFile>;
  resolveDone(s: RunStatusFile): void;
  /** 1 for a run a person started, +1 per subagent level (at most MAX_AGENT_DEPTH) */
  depth: number;
  /** subagent runs this run started, in order */
  children: string[];
  /** the run's metrics while it runs (subagents add their tokens) */
  metrics?: RunMetrics;
  /** frees the queue slot the run holds (set when a worker claims it) */
  releaseSlot?: () => void;
  /** messages a person sent the run (steer / follow_up), delivered by the loop */
  inbox: RunInbox;
  /** the run's approvals (`ask` tool calls waiting for a person), once the run has started */
  approvals?: ApprovalBroker;
  /** compute skills run through skill-kind tools, in order of first use */
  usedSkills: string[];
  /** MCP servers the run called, in order of first use (`done.used_mcp`). */
  usedMcp?: string[];
  /** Whether the run writes a checkpoint (runtime/checkpoint.jsonl) to be resumed from after its process dies. */
  durability: { checkpoint: boolean; resume?: ResumeStart; restart?: RestartStart };
}
