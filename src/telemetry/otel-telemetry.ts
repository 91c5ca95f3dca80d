/**
 * OpenTelemetry for runs: a RunService observer that subscribes to each run's bus and turns the
 * folded spans (run-spans.ts) into real spans, batched and exported over OTLP/HTTP. OpenTelemetry is
 * imported only here and only when an endpoint is configured (startTelemetry returns null otherwise),
 * so a Runtrail without tracing loads none of it.
 */
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { IdGenerator, ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ObservedRun, RunObserver } from '../runtime/run-service-types.js';
import { otlpTraceConfig, type Env } from './otlp-config.js';
import { RunSpanFolder, type RunSpanSink } from './run-spans.js';
import { captureMessageContent, genAiMessageAttributes } from './genai-messages.js';

export interface Telemetry {
  /** where spans go, as logs may show it (no credentials) */
  readonly url: string;
  /** Give it to RunService ({ observers }): each run's spans from its bus. */
  readonly observer: RunObserver;
  /** Exports every ended span now; resolves (never rejects) once the collector answered or the export gave up. */
  flush(): Promise<void>;
  /** Flushes, then stops exporting. Idempotent. */
  shutdown(): Promise<void>;
  /** The last export failure since the last success, or null. */
  lastError(): string | null;
}

export interface TelemetryOptions {
  env: Env;
  /** ms a batch waits before export; default OTEL_BSP_SCHEDULE_DELAY, else 1000 (the server exports within seconds) */
  scheduledDelayMs?: number;
  /** Told when exporting starts failing (once, until an export succeeds again); no secrets in it. */
  onExportError?: (message: string) => void;
}

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** The run's span takes the trace id decided at create (it is on run_status.json and the wire). */
class RunTraceIds implements IdGenerator {
  next: string | null = null;
  constructor(private readonly random: IdGenerator) {}
  generateTraceId = (): string => {
    const id = this.next;
    this.next = null;
    return id ?? this.random.generateTraceId();
  };
  generateSpanId = (): string => this.random.generateSpanId();
}

/** Tracing when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set, else null (nothing loaded). Throws TelemetryConfigError on a bad variable. */
export async function startTelemetry(opts: TelemetryOptions): Promise<Telemetry | null> {
  const cfg = otlpTraceConfig(opts.env);
  if (!cfg) return null;
  const [api, sdk, resources, otlp] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);

  let lastError: string | null = null;
  const inner = new otlp.OTLPTraceExporter({ url: cfg.url, headers: cfg.headers, ...(cfg.timeoutMs ? { timeoutMillis: cfg.timeoutMs } : {}) });
  // watches each export's outcome, so a collector that is down is said instead of spans vanishing
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (r) => {
        if (r.code === 0) lastError = null;
        else {
          const first = lastError === null;
          lastError = `could not export ${spans.length} span(s) to ${cfg.shownUrl}: ${r.error?.message ?? 'export failed'}`;
          if (first) opts.onExportError?.(lastError);
        }
        done(r);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  };

  const ids = new RunTraceIds(new sdk.RandomIdGenerator());
  const delay = opts.scheduledDelayMs ?? (opts.env.OTEL_BSP_SCHEDULE_DELAY?.trim() ? undefined : 1000);
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes({ 'service.name': cfg.serviceName }));
  const provider = new sdk.BasicTracerProvider({
    resource,
    idGenerator: ids,
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, delay !== undefined ? { scheduledDelayMillis: delay } : {})],
  });
  const tracer: Tracer = provider.getTracer('runtrail');
  // open invoke_agent spans by run and call: a subagent's run span goes under its parent's call
  const agentSpans = new Map<string, Span>();
  const callKey = (runId: string, toolCallId: string) => `${runId}\u0000${toolCallId}`;
  const withContent = captureMessageContent(opts.env);

  const observer: RunObserver = (run: ObservedRun) => {
    const { trace } = run;
    const caller = run.parent ? agentSpans.get(callKey(run.parent.runId, run.parent.toolCallId)) : undefined;
    const remote: Context = caller
      ? api.trace.setSpan(api.ROOT_CONTEXT, caller)
      : trace.parentSpanId
        ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
            traceId: trace.traceId,
            spanId: trace.parentSpanId,
            traceFlags: trace.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
            isRemote: true,
          })
        : api.ROOT_CONTEXT;
    const live = new Map<string, Span>();
    const sink: RunSpanSink = {
      open(s) {
        const parent = s.parentId ? live.get(s.parentId) : undefined;
        if (!parent && !trace.parentSpanId && !caller) ids.next = trace.traceId;
        const kind = s.kind === 'model' || s.kind === 'mcp' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
        const span = tracer.startSpan(
          s.name,
          { kind, startTime: s.startMs, attributes: s.attributes },
          parent ? api.trace.setSpan(api.ROOT_CONTEXT, parent) : remote,
        );
        ids.next = null;
        live.set(s.id, span);
        if (s.kind === 'agent' && s.toolCallId) agentSpans.set(callKey(run.runId, s.toolCallId), span);
      },
      close(s) {
        const span = live.get(s.id);
        if (!span) return;
        live.delete(s.id);
        if (s.kind === 'agent' && s.toolCallId) agentSpans.delete(callKey(run.runId, s.toolCallId));
        span.setAttributes(s.attributes);
        if (s.status === 'error') span.setStatus({ code: api.SpanStatusCode.ERROR, ...(s.error ? { message: s.error } : {}) });
        if (s.status === 'cancelled') span.setAttribute('runtrail.cancelled', true);
        span.end(s.endMs ?? undefined);
      },
      event(s, name, attributes, ts) {
        live.get(s.id)?.addEvent(name, attributes, ts);
      },
    };
    const folder = new RunSpanFolder(sink, { runId: run.runId, tenantId: run.tenantId, claw: run.claw });
    // a call is recorded before its `model` end event: its chat span is still open
    const offCalls =
      withContent && run.modelCalls
        ? run.modelCalls.subscribe((call) => {
            if (call.kind === 'turn' && call.span_id) live.get(call.span_id)?.setAttributes(genAiMessageAttributes(call));
          })
        : null;
    const off = run.bus.subscribe((ev) => {
      folder.push(ev);
      if (ev.stream === 'run' && TERMINAL.has(ev.data.type)) {
        off();
        offCalls?.();
      }
    });
  };

  let stopped: Promise<void> | null = null;
  return {
    url: cfg.shownUrl,
    observer,
    // a failed export is what lastError() and onExportError tell; flushing itself never throws
    flush: () => provider.forceFlush().catch(() => undefined),
    shutdown: () => (stopped ??= provider.shutdown().catch(() => undefined)),
    lastError: () => lastError,
  };
}
