/** A real OTLP/HTTP trace receiver on a loopback port: takes POST /v1/traces (JSON), keeps the spans. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) */
  url: string;
  spans: OtlpSpan[];
  requests: Array<{ path: string; contentType: string; headers: IncomingMessage['headers'] }>;
  /** answer the next exports with this status (500: a collector that fails) */
  failWith: number | null;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attrs(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

const nanosToMs = (n: string | number) => Number(BigInt(n) / 1000n) / 1000;

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const out: OtlpReceiver = { url: '', spans: [], requests: [], failWith: null, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      out.requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), headers: req.headers });
      if (out.failWith) {
        res.writeHead(out.failWith, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      // the JSON encoding of OTLP: ids are hex strings, times nanosecond strings
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            out.spans.push({
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: String(s.parentSpanId ?? ''),
              name: String(s.name),
              kind: Number(s.kind),
              startMs: nanosToMs(s.startTimeUnixNano as string),
              endMs: nanosToMs(s.endTimeUnixNano as string),
              attributes: attrs(s.attributes as []),
              status: (s.status as { code?: number; message?: string }) ?? {},
              events: ((s.events as Array<{ name: string; attributes?: [] }>) ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  out.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  out.close = () => new Promise<void>((r) => server.close(() => r()));
  return out;
}
