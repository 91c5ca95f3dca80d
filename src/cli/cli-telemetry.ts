/**
 * Tracing for a command that runs agents: started when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set
 * (nothing loaded otherwise), flushed before the command returns so a short `runtrail run` still
 * delivers its spans. A bad variable is a usage error naming it.
 */
import { startTelemetry, type Telemetry } from '../telemetry/otel-telemetry.js';
import { TelemetryConfigError, otlpTraceConfig } from '../telemetry/otlp-config.js';
import { UsageError, type CliOut } from './cli-io.js';

export async function cliTelemetry(env: Record<string, string | undefined>, stderr: CliOut, opts: { announce?: boolean } = {}): Promise<Telemetry | null> {
  try {
    for (const note of otlpTraceConfig(env)?.notes ?? []) stderr.write(`runtrail: ${note}\n`);
    const t = await startTelemetry({ env, onExportError: (m) => void stderr.write(`runtrail: traces: ${m}\n`) });
    if (t && opts.announce) stderr.write(`runtrail: exporting traces to ${t.url}\n`);
    return t;
  } catch (e) {
    if (e instanceof TelemetryConfigError) throw new UsageError(e.message);
    throw e;
  }
}

/** Exports what is left; a collector that fails was said by onExportError, and the command's exit code stays its own. */
export async function finishTelemetry(t: Telemetry | null, _stderr: CliOut): Promise<void> {
  if (!t) return;
  // onExportError has said it when exporting failed; shutdown never throws
  await t.shutdown();
}
