/**
 * Whether and where spans go, from the standard OpenTelemetry variables: exported over OTLP/HTTP
 * (JSON) only when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set.
 * Read from the env the front door was given (tests pass their own), never loads OpenTelemetry itself.
 */

export type Env = Record<string, string | undefined>;

export interface OtlpTraceConfig {
  /** where spans are POSTed */
  url: string;
  /** the url as logs show it: no user, password or query */
  shownUrl: string;
  /** from OTEL_EXPORTER_OTLP_TRACES_HEADERS / OTEL_EXPORTER_OTLP_HEADERS; values never printed */
  headers: Record<string, string>;
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT, ms */
  timeoutMs?: number;
  /** Things to tell the user (a protocol Runtrail does not speak), without secrets. */
  notes: string[];
}

export class TelemetryConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TelemetryConfigError';
  }
}

const val = (env: Env, k: string): string | undefined => {
  const v = env[k]?.trim();
  return v ? v : undefined;
};

/** True when either endpoint variable is set (and OTEL_SDK_DISABLED is not true). */
export function telemetryWanted(env: Env): boolean {
  if (val(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return false;
  return val(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined || val(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined;
}

function httpUrl(name: string, value: string): URL {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new TelemetryConfigError(
      `${name}: ${JSON.stringify(value.slice(0, 200))} is not a URL (expected http://host:port${name.includes('TRACES') ? '/v1/traces' : ''})`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new TelemetryConfigError(`${name}: ${JSON.stringify(`${u.protocol}//${u.host}`)} is not http(s); Runtrail exports traces over OTLP/HTTP`);
  }
  return u;
}

/** `k1=v1,k2=v2` with URL-encoded values (the OTLP exporter spec). */
function parseHeaders(name: string, value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value) return out;
  for (const pair of value.split(',')) {
    if (!pair.trim()) continue;
    const i = pair.indexOf('=');
    const key = i > 0 ? pair.slice(0, i).trim() : '';
    if (!key) throw new TelemetryConfigError(`${name}: ${JSON.stringify(pair.trim().slice(0, 60).replace(/=.*/, '=…'))} is not key=value`);
    let v = pair.slice(i + 1).trim();
    try {
      v = decodeURIComponent(v);
    } catch {
      // a value that is not URL-encoded is taken as written
    }
    out[key.toLowerCase()] = v;
  }
  return out;
}

function timeout(env: Env): number | undefined {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    const v = val(env, name);
    if (v === undefined) continue;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new TelemetryConfigError(`${name}: ${JSON.stringify(v)} must be a positive whole number of milliseconds`);
    return n;
  }
  return undefined;
}

/** The exporter's settings, or null when no endpoint is set; throws TelemetryConfigError naming the bad variable. */
export function otlpTraceConfig(env: Env): OtlpTraceConfig | null {
  if (!telemetryWanted(env)) return null;
  const traces = val(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  let url: string;
  if (traces) {
    // the signal-specific endpoint is used as given
    url = httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces).href;
  } else {
    const base = httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', val(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')!);
    // the base endpoint gets the signal's path appended (OTLP exporter spec)
    url = `${base.origin}${base.pathname.replace(/\/+$/, '')}/v1/traces${base.search}`;
  }
  const shown = new URL(url);
  const shownUrl = `${shown.origin}${shown.pathname}`;
  const notes: string[] = [];
  const protocol = val(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? val(env, 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol && protocol !== 'http/json') notes.push(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: Runtrail sends traces as http/json to ${shownUrl}`);
  const headers = {
    ...parseHeaders('OTEL_EXPORTER_OTLP_HEADERS', val(env, 'OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', val(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
  };
  const ms = timeout(env);
  return { url, shownUrl, headers, serviceName: val(env, 'OTEL_SERVICE_NAME') ?? 'runtrail', ...(ms !== undefined ? { timeoutMs: ms } : {}), notes };
}
