// Public API of runtrail. Each area appends its exports here.
export * from './events/diagnosis.js';
export * from './events/process-event.js';
export * from './events/agent-event.js';
export type * from './events/operation-reporter-types.js';
export type * from './tools/tool.js';
export type * from './providers/model-provider.js';
export type * from './runtime/agent.js';
export type * from './runtime/run-service-types.js';
// events: bus and process events
export * from './events/agent-event-factory.js';
export * from './events/agent-event-bus.js';
export * from './events/process-payload-sanitizer.js';
export { maskSecretValues, SECRET_MASK } from './events/secret-values.js';
export { registerSecret, registerEnvSecrets, maskSecrets, maskSecretsDeep, SecretMasker, MIN_SECRET_LENGTH } from './events/secret-masker.js';
export * from './events/process-event-factory.js';
export * from './events/process-event-buffer.js';
export * from './events/runtime-process-log.js';
export * from './events/operation-reporter.js';
export * from './events/process-pipeline.js';
export * from './events/engine-event.js';
export * from './events/engine-bridge.js';
// channels
export * from './channels/base-claw-adapter.js';
export * from './channels/frame-queue.js';
export * from './channels/sse-adapter.js';
export * from './channels/buffer-adapter.js';
// chat channels: the extension API and the builtins (telegram, slack, feishu)
export type * from './channels/channel-types.js';
export { defineChannel } from './channels/define-channel.js';
export { BUILTIN_CHANNELS } from './channels/builtin-channels.js';
export { sendWithRetry, retryDelay, DEFAULT_RETRY_POLICY, type RetryPolicy, type RetryOutcome } from './channels/send-retry.js';
// tools: exec + process
export { EXEC_DEFAULTS, readExecLimits, minimalBaseEnv, MAX_COMMAND_CHARS, type ExecLimits } from './tools/exec-config.js';
export * from './tools/byte-tail-buffer.js';
export * from './tools/process-session.js';
export * from './tools/process-registry.js';
export * from './tools/default-process-registry.js';
export * from './tools/exec-tool.js';
export * from './tools/process-tool.js';
export { liveGroupMembers, isGroupAlive, terminateGroup } from './tools/process-group.js';
export { spawnSupervised } from './tools/supervised-child.js';
export type { SpawnSpec, SupervisedChild, ChildExit, OutputStream } from './tools/supervised-child.js';
// providers: AI SDK, script and offline models. ModelTurn/OfflineProcedure are exported by runtime/agent.
export { modelTurnSchema, parseModelTurns } from './providers/model-turn.js';
export type { ParseTurnsResult } from './providers/model-turn.js';
export * from './providers/provider-errors.js';
export * from './providers/script-provider.js';
export * from './providers/offline-provider.js';
export * from './providers/message-mapping.js';
export { PROVIDER_ENV, AI_SDK_PROVIDERS } from './providers/provider-env.js';
export type { ProviderEnvSpec, AiSdkProviderName } from './providers/provider-env.js';
export * from './providers/ai-sdk-provider.js';
export * from './providers/resolve-model-provider.js';
// providers: model catalog, token estimate, context check, per-call options
export { IMAGE_MEDIA_TYPES } from './providers/model-provider.js';
export * from './providers/model-catalog.js';
export * from './providers/token-estimate.js';
export * from './providers/context-fit.js';
export * from './providers/provider-call-options.js';
export * from './providers/image-type.js';
// skills: compute-entry skills
export * from './skills/compute-skill-runner.js';
export * from './skills/execute-skill-tool.js';
// runtime: RunService, engine, loop, executor, workspace, hooks
export * from './runtime/service/run-service.js';
// the seams of several nodes; their PostgreSQL/Redis implementations are `runtrail/distributed`
export * from './runtime/service/run-queue.js';
export * from './runtime/storage/run-store.js';
export * from './runtime/storage/event-fanout.js';
export * from './runtime/run-request-error.js';
export * from './runtime/storage/run-id.js';
export * from './runtime/data-dir.js';
export * from './runtime/storage/run-workspace.js';
export * from './runtime/run-state-machine.js';
export * from './runtime/storage/event-store.js';
export * from './runtime/storage/event-tail.js';
export * from './runtime/agent-registry.js';
export * from './runtime/compute-skills.js';
export * from './runtime/package-root.js';
export * from './runtime/run/run-capabilities.js';
export * from './runtime/run-hooks.js';
export * from './runtime/loop/plan-progress.js';
export * from './runtime/run/stop-validation.js';
export * from './runtime/loop/tool-executor.js';
export * from './runtime/loop/agent-loop.js';
export * from './runtime/loop/agent-turn.js';
export * from './runtime/metrics/run-metrics.js';
export * from './runtime/metrics/model-usage-totals.js';
export * from './runtime/model-calls/model-call-record.js';
export { ModelCallRecorder, maskRecordedText, type ModelCallRecorderOptions } from './runtime/model-calls/model-call-recorder.js';
export { ModelCallFeed, type ModelCallListener } from './runtime/model-calls/model-call-feed.js';
export { capModelCallLine, DEFAULT_MAX_CALL_BYTES } from './runtime/model-calls/model-call-cap.js';
export { resolveCapture, type CaptureSettings, type ResolvedCapture } from './runtime/model-calls/capture-settings.js';
export { sentMessageOf } from './providers/sent-request.js';
export { genAiMessageAttributes, captureMessageContent } from './telemetry/genai-messages.js';
export * from './runtime/storage/run-manifest.js';
export * from './runtime/run/system-prompt.js';
export * from './runtime/create-run-request.js';
export { executeRun, type NoticeSource, type EngineDeps } from './runtime/run/run-engine.js';
export { writeTrace } from './runtime/storage/trace-file.js';
export { RUN_FILES } from './runtime/storage/run-files.js';
export type { PublishFn } from './runtime/run-publisher.js';
// skills: skill.json + SKILL.md loader
export * from './skills/skill-manifest.js';
export * from './skills/skill-loader.js';
// cli
export { runCli, USAGE } from './cli/run-cli.js';
export type { CliDeps } from './cli/cli-io.js';
// server: HTTP API, SSE/WebSocket streams, IM endpoint
export { startServer, buildServer, type ServerOptions, type RunningServer } from './server/start-server.js';
export { HttpError, errorBody } from './server/http-error.js';
export { listenRefusal, isLoopbackHost } from './server/listen-guard.js';
export { HTTP_LIMIT_DEFAULTS, type HttpLimits } from './server/http-limits.js';
export { UPLOAD_LIMIT_DEFAULTS, type UploadLimits } from './server/upload-quota.js';
export { weakTokenReason, MIN_TOKEN_LENGTH } from './server/api-token.js';
export { ServerConfigError } from './server/server-config-error.js';
export { parseImCommand, IM_HELP, type ImCommand } from './server/im-command.js';
export { assembleRunReply, splitReply, type ImReply } from './server/im-reply.js';
export { pluginInfo, type PluginInfo } from './server/plugin-catalog.js';
export { prometheusText } from './server/prometheus-text.js';
export { dispatchImMessage, type ImMessage, type ImOutcome, type ImDispatchOptions } from './server/im-dispatch.js';
export { ChannelHost, conversationOf, type ChannelHostOptions } from './server/channel-host/channel-host.js';
export type { ChannelStatus, ChatTarget, AnnounceResult, ChatAnnouncer } from './server/channel-host/types.js';
export { parseChannelsConfig, type ConfiguredChannel, type ChannelPolicy } from './extensions/channel-config.js';
export { runFrames, type RunFrame } from './server/run-frames.js';
// plugins: builtin feedbacklens, file_summary, chat
export { builtinPlugins, type BuiltinPluginOptions } from './plugins/builtin-plugins.js';
export { createFeedbackLensPlugin, FEEDBACKLENS_VERSION, type FeedbackLensOptions } from './plugins/feedbacklens/feedbacklens-plugin.js';
export { feedbackLensInputSchema, type FeedbackLensInput } from './plugins/feedbacklens/input-schema.js';
export {
  feedbackAnalysisSchema,
  productBacklogSchema,
  INSIGHT_REPORT_HEADINGS,
  FEEDBACK_ANALYSIS_FILE,
  PRODUCT_BACKLOG_FILE,
  INSIGHT_REPORT_FILE,
  type FeedbackAnalysisDoc,
  type ProductBacklogDoc,
} from './plugins/feedbacklens/artifact-schemas.js';
export { feedbackLensOfflineProcedure, COMPUTE_SKILL_THRESHOLD } from './plugins/feedbacklens/offline-procedure.js';
export { parseFeedbackCsv, type ParsedFeedback } from './plugins/feedbacklens/analysis/parse-feedback-csv.js';
export { streamFeedbackCsv, type RowSink, type StreamedFeedback, type StreamOutcome } from './plugins/feedbacklens/analysis/feedback-csv-stream.js';
export { analyseFeedback, type FeedbackStats, type ThemeSummary } from './plugins/feedbacklens/analysis/analyse-feedback.js';
export { clusterThemes } from './plugins/feedbacklens/analysis/theme-clustering.js';
export type { ThemeCluster } from './plugins/feedbacklens/analysis/theme-model.js';
export type { FeedbackRow } from './plugins/feedbacklens/analysis/feedback-row.js';
export { createFileSummaryPlugin, FILE_SUMMARY_VERSION } from './plugins/file-summary/file-summary-plugin.js';
export { fileSummaryInputSchema, type FileSummaryInput } from './plugins/file-summary/input-schema.js';
export { createChatPlugin, CHAT_HELP, chatInputSchema, type ChatInput } from './plugins/chat/chat-plugin.js';
export { contractValidator } from './plugins/shared/contract-validator.js';
export { createTextOnlyPlugin, type TextOnlyPluginOptions } from './plugins/text-only-plugin.js';
// plugins: shell_task
export { createShellTaskPlugin, SHELL_TASK_ARTIFACTS, type ShellTaskPluginOptions } from './plugins/shell-task/shell-task-plugin.js';
export { shellTaskInputSchema, type ShellTaskInput } from './plugins/shell-task/input-schema.js';
export * from './events/block-chunker.js';
export * from './events/thinking-tag-filter.js';
export * from './events/raw-stream-log.js';
export * from './channels/terminal-adapter.js';
// Your own agents: code plugins, the extension registry, Markdown agents
export { definePlugin, defineTool, type PluginTool, type PluginToolContext, type PluginToolResult, type RuntrailPlugin } from './extensions/define.js';
export { ExtensionRegistry, type AgentEntry, type ExtensionRegistryOptions, type ProjectConfig } from './extensions/extension-registry.js';
export { parseAgentFile, type AgentDefinition } from './extensions/markdown-agent.js';
export { problemLine, type DefinitionProblem } from './extensions/definition-problem.js';
export { checkSchema, jsonSchemaOf, type JsonSchema, type Schema, type SchemaIssue } from './tools/schema.js';
export { LiveAgentSource, type AgentSource } from './runtime/agent-registry.js';
// MCP servers as tools and Runtrail as an MCP server
export { ToolSourceError, type ToolSource } from './tools/tool-source.js';
export {
  parseMcpConfig,
  parseServerDefinition,
  expandVars,
  MCP_DEFAULTS,
  type McpServerConfig,
  type McpServerOptions,
  type McpTransportConfig,
  type McpConfigProblem,
} from './mcp/mcp-config.js';
export { McpConnection, type McpCallOptions, type McpTimings, type McpProgress, type McpLog } from './mcp/mcp-connection.js';
export { McpUnavailableError } from './mcp/mcp-unavailable-error.js';
export { McpServerPool, sharedMcpPool, MCP_IDLE_MS, type McpLease, type McpPoolOptions } from './mcp/mcp-server-pool.js';
export { McpToolSource, selectTools, type McpToolSourceOptions } from './mcp/mcp-tool-source.js';
export { mcpToolName, sanitizeToolPart, parseMcpToolEntry, MCP_TOOL_PREFIX } from './mcp/mcp-tool-name.js';
export { toToolResult as mcpResultToToolResult, type ArtifactWriter } from './mcp/mcp-result.js';
export { GroupStdioTransport, StdoutNoiseError } from './mcp/stdio-group-transport.js';
export { resolveAgentMcp, agentMcpSummary } from './extensions/agent-mcp.js';
export { createRuntrailMcpServer, artifactUri } from './cli/runtrail-mcp-server.js';
export { startRuntrailMcpHttp } from './cli/mcp-serve.js';
// OpenTelemetry traces, the run page's trace view and the AI SDK's UI message stream
export { parseTraceparent, runTraceContext, newTraceId, isTraceId, type RunTraceContext, type TraceParent } from './events/trace-context.js';
export { startTelemetry, type Telemetry, type TelemetryOptions } from './telemetry/otel-telemetry.js';
export { otlpTraceConfig, telemetryWanted, TelemetryConfigError, type OtlpTraceConfig } from './telemetry/otlp-config.js';
export { RunSpanFolder, type RunSpan, type RunSpanKind, type RunSpanSink, type RunSpanContext, type SpanAttributes } from './telemetry/run-spans.js';
export { runTraceView, type RunTraceView, type TraceBar } from './telemetry/run-trace-view.js';
export { UiMessageStreamTranslator, UI_MESSAGE_STREAM_HEADERS, type RunMessageMetadata } from './server/ui-message-stream.js';
// Schedules and completion webhooks
export { TriggerHost, type TriggerHostOptions, type TriggerStores, type ScheduleView, type Announcer } from './triggers/trigger-host.js';
export { projectTriggers, projectTriggerProblems } from './triggers/project-triggers.js';
export { triggerConfig, DEFAULT_TRIGGER_CONFIG, type TriggerConfig, type WebhookRetry } from './triggers/trigger-config.js';
export { checkScheduleDefinition, type DefinitionContext } from './triggers/schedule-definition.js';
export { WebhookAllowList } from './triggers/webhook-allow.js';
export { checkWebhook, secretProblem } from './triggers/webhook-target.js';
export { sendWebhook, signedHeaders, type SendRequest, type SendResult } from './triggers/webhook-sender.js';
export { webhookRetryDelay } from './triggers/webhook-retry.js';
export { FileScheduleStore, type ScheduleStore } from './triggers/schedule-store.js';
export { FileWebhookStore, type WebhookStore, type RunWebhooks } from './triggers/webhook-store.js';
export type {
  ScheduleDefinition,
  Schedule,
  FireRecord,
  WebhookMessage,
  WebhookAttemptLine,
  WebhookEventType,
  StoredTarget,
  AnnounceTarget,
} from './triggers/types.js';
// The sandbox of a run's processes: policy (agent within the operator's config), support, probes, the proxy
export {
  resolveSandboxPolicy,
  sandboxSummary,
  DEFAULT_SANDBOX_LIMITS,
  type SandboxPolicy,
  type AgentSandboxSettings,
  type OperatorSandboxSettings,
  type SandboxLimits,
  type NetworkSetting,
  type ResolvedNetwork,
  type ElevatedMode,
} from './sandbox/sandbox-policy.js';
export { describeSandbox, sandboxStartLine, type SandboxDescription } from './sandbox/sandbox-description.js';
export { sandboxSupport, describeUnsupported, type SandboxSupport } from './sandbox/sandbox-support.js';
export { runSandboxProbes, type ProbeResult } from './sandbox/sandbox-probes.js';
export { launchSandboxed, SandboxUnavailableError, type SandboxLaunch } from './sandbox/sandbox-launch.js';
export { isPublicAddress } from './events/address-class.js';
export { FilteringProxy, type ProxyDenial } from './sandbox/network-proxy.js';
export { limitEnforcement, type LimitEnforcement } from './sandbox/sandbox-limits.js';
