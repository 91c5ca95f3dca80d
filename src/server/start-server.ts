/**
 * `runtrail serve`: the run API, live streams (SSE + WebSocket), the IM endpoint, /metrics and the web page,
 * all over one Fastify 5 instance. `buildServer` returns the instance (tests use it), `startServer` listens.
 */
import { maskSecretValues } from '../events/secret-values.js';
import { maskSecrets, registerSecret } from '../events/secret-masker.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyMultipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import fastifyWebsocket from '@fastify/websocket';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import type { Agent } from '../runtime/agent.js';
import { redactUrl, weakTokenReason } from './api-token.js';
import { errorBody, sendError } from './http-error.js';
import { ServerConfigError } from './server-config-error.js';
import { DEFAULT_HOST, DEFAULT_PORT } from './default-address.js';
import { ConnectionCaps, HTTP_LIMIT_DEFAULTS, SlowBodyGuard, type HttpLimits } from './http-limits.js';
import { isLoopbackHost, listenRefusal } from './listen-guard.js';
import { runtrailPackageRoot } from '../runtime/package-root.js';
import { pluginInfo } from './plugin-catalog.js';
import { prometheusText } from './prometheus-text.js';
import { registerImRoute } from './im-route.js';
import { boundJsonBodies } from './json-body.js';
import { registerRunRoutes } from './run-routes.js';
import { registerSseRoute } from './sse-route.js';
import { RunFrameHubs } from './run-frame-hub.js';
import { registerTraceRoute } from './trace-route.js';
import { registerModelCallsRoute } from './model-calls-route.js';
import { registerChatRoutes } from './chat-route.js';
import { registerUploadRoute } from './upload-route.js';
import { UPLOAD_LIMIT_DEFAULTS, UploadQuota, type UploadLimits } from './upload-quota.js';
import { registerWsRoute } from './ws-route.js';
import { listSkills } from './skill-catalog.js';
import { registerInteractionRoutes } from './interaction-routes.js';
import { newStreamCounters } from './stream-counters.js';
import type { ChannelHost } from './channel-host/channel-host.js';
import { channelMetricsText, registerChannelRoutes } from './channel-routes.js';
import { registerTriggerRoutes } from './trigger-routes.js';
import type { TriggerHost } from '../triggers/trigger-host.js';
import { Tenancy } from './tenant-guard.js';
import type { SignInLimits } from '../tenants/sign-in-limiter.js';
import { registerTenantRoutes } from './tenant-routes.js';
import { SERVER_LOG_HOOKS } from './server-log.js';

export interface ServerOptions {
  service: RunServiceApi;
  host?: string;
  port?: number;
  /** Bearer token for everything but /healthz; default env RUNTRAIL_API_TOKEN. */
  token?: string;
  /** The run data folder (uploads go to <dataDir>/uploads); default env RUNTRAIL_DATA_DIR or ./.runtrail. */
  dataDir?: string;
  /** Where file inputs may come from; default [<dataDir>/uploads]. */
  inputRoots?: string[] | 'any';
  /** The built web page; default <package>/web/dist. */
  webDir?: string;
  skillsDir?: string;
  /** The agents the service runs, for GET /api/plugins, the IM endpoint and input-root checks. */
  agents?: Agent[];
  /** true/false, or a pino logger. Default false. */
  logger?: boolean | FastifyBaseLogger;
  bodyLimit?: number;
  uploadLimitBytes?: number;
  pingMs?: number;
  /** Bytes a stream client may have waiting before it must catch up (1 MiB) ... */
  maxClientQueueBytes?: number;
  /** ... reading at least once every this many ms meanwhile, or be dropped with a final error frame (10 s). */
  slowClientMs?: number;
  /** SSE + WebSocket clients at once (1,000); more get 503. */
  maxStreamClients?: number;
  wsHelloMs?: number;
  /** Characters per IM message (4,000). */
  imMessageLimit?: number;
  imWaitMs?: number;
  chatPlugin?: string;
  /** The chat channels this process runs, for GET /api/channels and /metrics. */
  channels?: ChannelHost;
  /** Allow `model: "script:<file>"` in POST /api/runs (it reads a file on this machine). Default false. */
  allowScriptModel?: boolean;
  /** Timeouts and connection caps (HTTP_LIMIT_DEFAULTS; config.json `http`). */
  http?: Partial<HttpLimits>;
  /** What each client may keep in <dataDir>/uploads (UPLOAD_LIMIT_DEFAULTS; config.json `uploads`). */
  uploads?: Partial<UploadLimits>;
  env?: Record<string, string | undefined>;
  /** Schedules and completion webhooks (runtrail serve gives them); absent: neither is offered. */
  triggers?: TriggerHost;
  /** Failed sign-ins allowed per client address and per key id in a minute (60 and 10). */
  signIn?: Partial<SignInLimits>;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

export { redactUrl };

/** The hostname of a Host header (`name[:port]`) or an Origin (`scheme://name[:port]`), or null when unreadable. */
function hostnameOf(value: string, isOrigin: boolean): string | null {
  try {
    const u = new URL(isOrigin ? value : `http://${value}`);
    return u.hostname || null;
  } catch {
    return null;
  }
}

/**
 * Without a token only loopback may talk to the server, but a browser on this machine is a bridge to
 * any website: DNS rebinding sends a foreign Host, cross-site pages (CSRF uploads and cancels, WebSocket
 * hijacking) send a foreign Origin. Both must name a loopback host. Returns why a request is refused, or null.
 */
export function localRequestRefusal(host: string | undefined, origin: string | undefined): string | null {
  if (host !== undefined) {
    const name = hostnameOf(host, false);
    if (!name || !isLoopbackHost(name)) {
      return `Host ${JSON.stringify(host.slice(0, 100))} is not a loopback name; without RUNTRAIL_API_TOKEN the server answers only to localhost, 127.0.0.1 or [::1]`;
    }
  }
  if (origin !== undefined) {
    const name = hostnameOf(origin, true);
    if (!name || !isLoopbackHost(name)) {
      return `cross-site request from Origin ${JSON.stringify(origin.slice(0, 100))} refused; without RUNTRAIL_API_TOKEN only pages served from loopback may call the server`;
    }
  }
  return null;
}

/** An error as logs may show it: credentials inside its message and stack are masked. */
function errorForLog(err: unknown): Record<string, unknown> {
  const e = err as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown; statusCode?: unknown };
  const text = (v: unknown) => (typeof v === 'string' ? maskSecretValues(v) : undefined);
  return {
    type: typeof e?.name === 'string' ? e.name : typeof err,
    message: text(e?.message) ?? maskSecretValues(String(err)),
    stack: text(e?.stack),
    code: e?.code,
    statusCode: e?.statusCode,
  };
}

/** Fastify's own request log fields, with the URL redacted. */
function requestForLog(req: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }): Record<string, unknown> {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

const PAGE_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** RunService exposes agentNames()/getAgent(); any other RunServiceApi gives none unless passed. */
function agentsOf(service: RunServiceApi): Agent[] {
  return service.agentNames?.().flatMap((n) => service.getAgent?.(n) ?? []) ?? [];
}

export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const env = opts.env ?? process.env;
  const token = opts.token ?? (env.RUNTRAIL_API_TOKEN || undefined);
  if (token !== undefined) {
    const weak = weakTokenReason(token);
    if (weak) throw new ServerConfigError(weak);
    registerSecret(token, 'RUNTRAIL_API_TOKEN');
  }
  const limits: HttpLimits = { ...HTTP_LIMIT_DEFAULTS, ...opts.http };
  // the service's own folder when it has one (RunService does), so uploads and plan files line up with it
  const dataDir = resolve(opts.dataDir ?? opts.service.dataDir ?? (env.RUNTRAIL_DATA_DIR?.trim() || '.runtrail'));
  const uploadDir = join(dataDir, 'uploads');
  const inputRoots = opts.inputRoots ?? [uploadDir];
  const root = runtrailPackageRoot();
  const webDir = opts.webDir ?? join(root, 'web', 'dist');
  const skillsDir = opts.skillsDir ?? join(root, 'skills');
  // asked at each request: `serve --watch` replaces the service's agents while it runs
  const agents = () => opts.agents ?? agentsOf(opts.service);
  const infos = () => agents().map(pluginInfo);
  const skillDirs = opts.service.skillDirs ? [...opts.service.skillDirs] : [skillsDir];
  const counters = newStreamCounters();
  const service = opts.service;

  // a logger the server makes writes every line with the server's secrets masked and no control
  // sequence a terminal would act on (a request's URL or a run's error is someone else's text); one
  // passed in keeps its own stream (the serializers below still mask the request URL and errors)
  const logger = opts.logger === true ? { hooks: SERVER_LOG_HOOKS } : (opts.logger ?? false);
  const common = {
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    forceCloseConnections: true,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // headers must arrive in time, checked every second (Node checks every 30 s by default); a body is
    // held to a rate instead of a total time (SlowBodyGuard): a large upload on a slow link is fine
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: 1_000 },
    requestTimeout: 0,
    // request logs carry the URL, and GET may carry ?access_token= (EventSource and WebSocket cannot set headers)
    childLoggerFactory: ((
      parent: FastifyBaseLogger,
      bindings: Parameters<FastifyBaseLogger['child']>[0],
      childOpts: NonNullable<Parameters<FastifyBaseLogger['child']>[1]>,
    ) => parent.child(bindings, { ...childOpts, serializers: { ...childOpts.serializers, req: requestForLog, err: errorForLog } })) satisfies NonNullable<
      FastifyServerOptions['childLoggerFactory']
    >,
  };
  const app: FastifyInstance = (typeof logger === 'object' && 'info' in logger
    ? Fastify({ loggerInstance: logger, ...common })
    : Fastify({ logger, ...common })) as unknown as FastifyInstance;
  // every JSON body is bounded in depth (json-body.ts) as in size (bodyLimit), whatever route reads it
  boundJsonBodies(app);
  const caps = new ConnectionCaps(app.server, limits);
  // a connection over the caps gets its answer before any route runs or any body is read, then closes
  app.addHook('onRequest', async (req, reply) => {
    const refused = caps.refusal(req.raw.socket);
    if (!refused) return;
    reply.code(503).header('connection', 'close').header('retry-after', '5').send(errorBody('too_many_connections', refused));
    return reply;
  });
  const slowBodies = new SlowBodyGuard(limits);
  app.addHook('onClose', async () => slowBodies.close());
  // every request with a body is watched from its first moment, the refused ones included
  app.addHook('onRequest', async (req, reply) => slowBodies.watch(req.raw, reply.raw));
  // what the API answers (run status, manifests, errors, …) has the server's secrets masked; streams are
  // masked where their events are published
  app.addHook('onSend', async (_req, _reply, payload) => (typeof payload === 'string' ? maskSecrets(payload) : payload));

  app.setErrorHandler((err, req, reply) => {
    const status = (err as { statusCode?: number }).statusCode;
    if (!status || status >= 500) req.log.error({ err }, 'request failed');
    return sendError(reply, err);
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });

  await app.register(fastifyMultipart, {
    limits: { fileSize: opts.uploads?.maxFileBytes ?? opts.uploadLimitBytes ?? UPLOAD_LIMIT_DEFAULTS.maxFileBytes, files: 1, fields: 10 },
  });
  await app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 } });

  // The guards come after @fastify/websocket's own onRequest hook: it marks upgrade requests so that a
  // refused one has its socket destroyed (else every refused upgrade holds a socket open, and close() hangs).
  if (!token) {
    app.addHook('onRequest', async (req, reply) => {
      if (req.routeOptions.url === '/healthz') return;
      const why = localRequestRefusal(req.headers.host, req.headers.origin);
      if (why) {
        // answered before the body is read; the connection closes, so a body still coming holds nothing
        reply.code(403).header('connection', 'close').send(errorBody('forbidden', why));
        return reply;
      }
    });
  }
  // keys and the server token become a tenant scope; each route's policy is applied (tenant-guard.ts)
  const tenancy = new Tenancy({ dataDir, service: opts.service, token, ...(opts.signIn ? { signIn: opts.signIn } : {}) });
  tenancy.install(app);
  registerTenantRoutes(app, tenancy);

  app.get('/healthz', async () => ({ ok: true }));
  app.get('/metrics', async (_req, reply) => {
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return prometheusText(service.stats(), counters) + channelMetricsText(opts.channels?.status() ?? []);
  });
  app.get('/api/plugins', async () => ({ plugins: infos() }));
  app.get('/api/skills', async () => listSkills(skillDirs));

  registerInteractionRoutes(app, service);
  registerChannelRoutes(app, opts.channels);
  const triggers = opts.triggers;
  const checkWebhook = triggers ? { checkWebhook: (raw: unknown) => triggers.checkWebhook(raw) } : {};
  registerRunRoutes(app, service, tenancy, { dataDir, agents, inputRoots, allowScriptModel: opts.allowScriptModel ?? false, ...checkWebhook });
  if (triggers) registerTriggerRoutes(app, service, triggers);
  const streamOpts = {
    pingMs: opts.pingMs ?? 15_000,
    maxQueueBytes: opts.maxClientQueueBytes ?? 1024 * 1024,
    slowClientMs: opts.slowClientMs ?? 10_000,
    maxClients: opts.maxStreamClients ?? 1000,
    maxPerClient: limits.maxStreamsPerClient,
  };
  // SSE and WebSocket clients of one run share its frames
  const hubs = new RunFrameHubs(service);
  registerSseRoute(app, service, hubs, counters, streamOpts);
  registerTraceRoute(app, service, { dataDir });
  registerModelCallsRoute(app, service, { dataDir });
  // the AI SDK's useChat protocol (UI message stream v1)
  registerChatRoutes(app, service, {
    run: { dataDir, agents, inputRoots, allowScriptModel: opts.allowScriptModel ?? false, ...checkWebhook },
    stream: streamOpts,
    counters,
    defaultPlugin: opts.chatPlugin ?? 'chat',
  });
  registerWsRoute(app, service, hubs, counters, {
    ...streamOpts,
    helloMs: opts.wsHelloMs ?? 300,
    runVisible: async (req, id) => (await tenancy.runs.get(tenancy.scopeOf(req), id)) !== null,
  });
  registerUploadRoute(
    app,
    new UploadQuota(uploadDir, {
      ...UPLOAD_LIMIT_DEFAULTS,
      ...(opts.uploadLimitBytes !== undefined ? { maxFileBytes: opts.uploadLimitBytes } : {}),
      ...opts.uploads,
    }),
  );
  registerImRoute(app, service, {
    limit: opts.imMessageLimit ?? 4000,
    waitMs: opts.imWaitMs ?? 120_000,
    catalog: infos,
    chatPlugin: opts.chatPlugin ?? 'chat',
  });

  if (existsSync(join(webDir, 'index.html'))) {
    await app.register(fastifyStatic, {
      root: webDir,
      prefix: '/',
      index: ['index.html'],
      wildcard: true,
      // the page talks to this server only; model text is sanitised, and this stops anything that slips through
      setHeaders: (res) => res.setHeader('content-security-policy', PAGE_CSP),
    });
  } else {
    app.get('/', async (_req, reply) =>
      reply.type('text/plain; charset=utf-8').send(`Runtrail API is up. The web page is not built (${webDir}): run npm run build:web.\n`),
    );
  }
  return app;
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const env = opts.env ?? process.env;
  const host = opts.host ?? DEFAULT_HOST;
  const port = opts.port ?? DEFAULT_PORT;
  const token = opts.token ?? (env.RUNTRAIL_API_TOKEN || undefined);
  const refusal = listenRefusal(host, token) ?? (token !== undefined ? weakTokenReason(token) : null);
  if (refusal) throw new ServerConfigError(refusal);
  // RunService.init() marks runs a crash left live as failed before anyone can watch them.
  await opts.service.init?.();
  const app = await buildServer({ ...opts, token });
  await app.listen({ host, port });
  const addr = app.server.address();
  const actualPort = addr && typeof addr === 'object' ? addr.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${actualPort}`,
    app,
    close: async () => {
      await app.close();
    },
  };
}
