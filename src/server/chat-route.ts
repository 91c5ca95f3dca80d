/**
 * The AI SDK's chat protocol, so `useChat` (AI SDK v6, DefaultChatTransport) works against Runtrail:
 * POST /api/chat starts a run from the last user message (the chat `id` is its conversation, the plugin
 * `?plugin=` or the body's, default `chat`) and answers with the run as a UI message stream (v1);
 * GET /api/chat/:id/stream replays the chat's live run (204 when it has none). A client that leaves never
 * cancels the run (POST /api/runs/:id/cancel does): it resumes. An assistant message whose tool parts
 * answer approvals (state `approval-responded`) decides them on the live run and continues its stream.
 */
import { refuseRunProcess } from './run-process-guard.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RUN_STATUSES } from '../events/agent-event.js';
import type { RunServiceApi, RunStatusFile } from '../runtime/run-service-types.js';
import { isTerminalRunState } from '../runtime/run-state-machine.js';
import { HttpError, invalidBody, issuesFromZod, sendError } from './http-error.js';
import { agentNamed, named } from './agent-field.js';
import { createRunOverHttp, traceparentOf, type RunRouteOptions } from './run-routes.js';
import { tooManyClients, type StreamOptions } from './sse-route.js';
import { clientKey } from './http-limits.js';
import { takeClientSlot, type StreamCounters } from './stream-counters.js';
import { sseChunk, UI_MESSAGE_STREAM_HEADERS, UiMessageStreamTranslator } from './ui-message-stream.js';
import { drained } from './response-drained.js';

// the conversation_id rule of run requests: the chat id becomes one
const chatId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_:-][A-Za-z0-9_.:-]*$/, 'letters, digits and _ . : - only')
  .refine((s) => !s.includes('..'), 'must not contain ".."');

const part = z.looseObject({ type: z.string() });
const message = z.looseObject({ id: z.string().optional(), role: z.enum(['system', 'user', 'assistant']), parts: z.array(part).max(1000) });

/** What useChat sends, and what a run takes beside its goal (checked by the run service as for POST /api/runs). */
const ChatBody = z.strictObject({
  id: chatId,
  messages: z.array(message).min(1, 'must hold at least the user message').max(1000),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().max(200).optional(),
  agent: z.string().min(1).max(100).optional(),
  /** the older word for `agent` */
  plugin: z.string().min(1).max(100).optional(),
  input: z.unknown().optional(),
  model: z.unknown().optional(),
  reasoning: z.unknown().optional(),
  limits: z.unknown().optional(),
  skill: z.unknown().optional(),
  tenant_id: z.unknown().optional(),
  /** a completion webhook for the run this message starts */
  webhook: z.unknown().optional(),
});
type ChatBody = z.infer<typeof ChatBody>;

const LIVE_STATES = RUN_STATUSES.filter((s) => !isTerminalRunState(s));
const MAX_GOAL = 8000;

export interface ChatRouteOptions {
  run: RunRouteOptions;
  stream: StreamOptions;
  counters: StreamCounters;
  /** the plugin when neither ?plugin= nor the body names one */
  defaultPlugin: string;
}

/** The chat's newest run that has not ended, or null. */
async function liveRunOf(service: RunServiceApi, conversationId: string): Promise<RunStatusFile | null> {
  // one read of every live status: a run moving from one to the next between two reads was in neither
  const { runs } = await service.list({ statuses: LIVE_STATES, limit: 500 });
  return runs.find((r) => r.conversation_id === conversationId) ?? null;
}

/** Approval answers in the last assistant message: `{ approvalId, approved, reason }`. */
function approvalAnswers(body: ChatBody): Array<{ id: string; approved: boolean; reason?: string }> {
  const last = body.messages[body.messages.length - 1];
  if (last.role !== 'assistant') return [];
  return last.parts.flatMap((p) => {
    const a = (p as { state?: unknown; approval?: { id?: unknown; approved?: unknown; reason?: unknown } }).approval;
    if ((p as { state?: unknown }).state !== 'approval-responded' || !a || typeof a.id !== 'string' || typeof a.approved !== 'boolean') return [];
    return [{ id: a.id, approved: a.approved, ...(typeof a.reason === 'string' && a.reason ? { reason: a.reason } : {}) }];
  });
}

function goalOf(body: ChatBody): string {
  const i = body.messages.length - 1;
  const last = body.messages[i];
  if (last.role !== 'user') throw invalidBody([{ path: `messages.${i}.role`, message: `the last message must be the user's (got ${last.role})` }]);
  const text = last.parts
    .flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : []))
    .join('\n')
    .trim();
  if (!text) throw invalidBody([{ path: `messages.${i}.parts`, message: 'the last user message has no text part' }]);
  if (text.length > MAX_GOAL) throw invalidBody([{ path: `messages.${i}.parts`, message: `the message is ${text.length} characters; at most ${MAX_GOAL}` }]);
  return text;
}

/** The agent: the body's `agent` (or `plugin`), else ?agent= (or ?plugin=), else the default; two different ones are refused. */
function agentOf(body: ChatBody, query: unknown, dflt: string): string {
  const q = (query as Record<string, unknown> | undefined) ?? {};
  return (
    agentNamed(named(body.agent, "the body's agent"), named(body.plugin, "the body's plugin"), named(q.agent, '?agent='), named(q.plugin, '?plugin=')) ?? dflt
  );
}

/**
 * Writes the run as a UI message stream until its end (or the client leaves). `quietUntil`: events up to
 * the one it returns true for are folded but not sent (a continuation: the client has those parts).
 */
async function streamRun(
  req: FastifyRequest,
  reply: FastifyReply,
  service: RunServiceApi,
  run: RunStatusFile,
  opts: ChatRouteOptions,
  quietUntil?: (ev: Parameters<UiMessageStreamTranslator['push']>[0]) => boolean,
): Promise<void> {
  const client = clientKey(req.ip);
  const busy = tooManyClients(opts.counters, opts.stream, client);
  if (busy) {
    sendError(reply.header('retry-after', '5'), busy);
    return;
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { ...UI_MESSAGE_STREAM_HEADERS, 'x-runtrail-run-id': run.run_id });
  opts.counters.sseClients++;
  const releaseSlot = takeClientSlot(opts.counters, client);
  const abort = new AbortController();
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearInterval(ping);
    opts.counters.sseClients--;
    releaseSlot();
    abort.abort();
    if (!res.writableEnded) res.end();
  };
  const ping = setInterval(() => {
    if (!res.writableEnded) res.write(': ping\n\n');
  }, opts.stream.pingMs);
  ping.unref?.();
  res.on('close', finish);

  // the partial answers of turns redone after a crash: left out, not shown beside their redone turn
  const discarded = (await service.discardedRanges?.(run.run_id).catch(() => [])) ?? [];
  const tr = new UiMessageStreamTranslator({ run_id: run.run_id, trace_id: run.trace_id || run.run_id, conversation_id: run.conversation_id }, discarded);
  let quiet = quietUntil !== undefined;
  let paused = false;
  const write = async (text: string): Promise<boolean> => {
    res.write(text);
    opts.counters.framesSent++;
    if (res.writableLength > opts.stream.maxQueueBytes && !(await drained(res, opts.stream.slowClientMs))) {
      if (finished) return false;
      opts.counters.clientsDropped++;
      res.write(sseChunk({ type: 'error', errorText: `stream dropped: this client read too slowly; GET /api/chat/${run.conversation_id}/stream resumes it` }));
      finish();
      setTimeout(() => res.destroy(), 10_000).unref();
      return false;
    }
    return true;
  };
  try {
    if (!(await write(sseChunk(tr.start())))) return;
    for await (const ev of service.events(run.run_id, { after: 0, signal: abort.signal })) {
      if (finished) break;
      const chunks = tr.push(ev);
      if (quiet) {
        if (quietUntil!(ev)) quiet = false;
        continue;
      }
      for (const c of chunks) if (!(await write(sseChunk(c)))) return;
      if (tr.finished) break;
      // a call that still waits for a person ends this response; a replayed request already decided goes on
      const asked = chunks.flatMap((c) => (c.type === 'tool-approval-request' ? [c.approvalId] : []));
      const pending = asked.length ? new Set((service.pendingApprovals?.(run.run_id) ?? []).map((a) => a.id)) : null;
      if (pending && asked.some((id) => pending.has(id))) {
        for (const c of tr.pause()) if (!(await write(sseChunk(c)))) return;
        paused = true;
        break;
      }
    }
    if (!finished && (tr.finished || paused)) await write(sseChunk('[DONE]'));
  } catch (err) {
    req.log.warn({ err, runId: run.run_id }, 'chat stream ended by error');
  } finally {
    finish();
  }
}

export function registerChatRoutes(app: FastifyInstance, service: RunServiceApi, opts: ChatRouteOptions): void {
  app.post<{ Querystring: Record<string, unknown> }>('/api/chat', async (req, reply) => {
    const parsed = ChatBody.safeParse(req.body);
    if (!parsed.success) throw invalidBody(issuesFromZod(parsed.error.issues));
    const body = parsed.data;

    const answers = approvalAnswers(body);
    if (answers.length) {
      // the client answered approvals: decide them on the chat's live run, then continue its message
      const run = await liveRunOf(service, body.id);
      if (!run) throw new HttpError(409, 'wrong_state', `chat ${body.id} has no live run waiting for these approvals (${answers.map((a) => a.id).join(', ')})`);
      if (!service.decideApproval) throw new HttpError(501, 'not_supported', 'this service takes no approvals');
      refuseRunProcess(req, 'an approval decision');
      for (const a of answers) {
        await service.decideApproval(run.run_id, a.id, { decision: a.approved ? 'approve' : 'deny', ...(a.reason ? { reason: a.reason } : {}), by: 'web' });
      }
      const waiting = new Set(answers.map((a) => a.id));
      return streamRun(req, reply, service, run, opts, (ev) => {
        if (ev.stream !== 'tool' || ev.data.phase !== 'approval') return false;
        const id = (ev.data as { approval?: { id?: string; status?: string } }).approval;
        if (id?.status === 'pending' && id.id) waiting.delete(id.id);
        return waiting.size === 0;
      });
    }

    const goal = goalOf(body);
    const live = await liveRunOf(service, body.id);
    if (live) {
      throw new HttpError(
        409,
        'wrong_state',
        `chat ${body.id} already has a live run ${live.run_id} (${live.status}): resume it with GET /api/chat/${body.id}/stream, or cancel it with POST /api/runs/${live.run_id}/cancel`,
        {
          run_id: live.run_id,
        },
      );
    }
    const { id, messages: _m, trigger: _t, messageId: _mid, plugin: _p, agent: _a, ...rest } = body;
    const runBody = { ...rest, agent: agentOf(body, req.query, opts.defaultPlugin), goal, input: rest.input ?? {}, conversation_id: id };
    const run = await createRunOverHttp(service, runBody, opts.run, { claw: 'web', ...traceparentOf(req.headers) });
    return streamRun(req, reply, service, run, opts);
  });

  app.get<{ Params: { id: string } }>('/api/chat/:id/stream', { exposeHeadRoute: false }, async (req, reply) => {
    const id = chatId.safeParse(req.params.id);
    if (!id.success) throw invalidBody(issuesFromZod(id.error.issues, 'id'));
    const run = await liveRunOf(service, id.data);
    if (!run) return reply.code(204).send();
    return streamRun(req, reply, service, run, opts);
  });
}
