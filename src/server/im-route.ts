/** POST /api/im/messages { conversation_id, text } — what a chat bot calls; answers with the messages to post. */
import { refuseRunProcess } from './run-process-guard.js';
import type { AgentEvent } from '../events/agent-event.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { invalidBody, issuesFromZod } from './http-error.js';
import { dispatchImMessage } from './im-dispatch.js';
import { assembleRunReply, splitReply } from './im-reply.js';
import type { PluginInfo } from './plugin-catalog.js';

const ImBody = z.object({
  conversation_id: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_.:@-]+$/, 'letters, digits and _ . : @ - only'),
  text: z.string().max(20_000),
});

export interface ImOptions {
  /** characters per message (4,000) */
  limit: number;
  /** how long to wait for a run before answering "still running" */
  waitMs: number;
  /** What each of the service's agents takes, now (they can change under `serve --watch`). */
  catalog: () => PluginInfo[];
  chatPlugin: string;
}

export function registerImRoute(app: FastifyInstance, service: RunServiceApi, opts: ImOptions): void {
  app.post('/api/im/messages', async (req) => {
    // an IM message can decide approvals and steer runs: not from a run's own process
    refuseRunProcess(req, 'an IM message');
    const parsed = ImBody.safeParse(req.body);
    if (!parsed.success) throw invalidBody(issuesFromZod(parsed.error.issues));
    const { conversation_id, text } = parsed.data;
    const answer = (t: string, extra: Record<string, unknown> = {}) => ({
      conversation_id,
      messages: splitReply(t, opts.limit),
      media: [] as string[],
      ...extra,
    });

    const outcome = await dispatchImMessage(
      service,
      { conversationId: conversation_id, text },
      {
        catalog: opts.catalog,
        chatPlugin: opts.chatPlugin,
        createRun: (req) => service.create(req, { claw: 'im', fromNetwork: true }),
      },
    );
    if (outcome.kind === 'follow') return runReply(outcome.runId, outcome.prefix);
    const { text: said, runId, status, error } = outcome;
    return answer(said, { ...(runId ? { run_id: runId } : {}), ...(status ? { status } : {}), ...(error ? { error } : {}) });

    /** Waits for the run's reply; a tool call that needs approval ends the wait with how to decide it. */
    async function runReply(runId: string, prefix = '') {
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), opts.waitMs);
      const withPrefix = (t: string) => (prefix ? `${prefix}\n\n${t}` : t);
      try {
        // history holds earlier approvals too: only one still waiting ends the wait
        const waiting = (ev: AgentEvent) =>
          ev.stream === 'tool' &&
          ev.data.phase === 'approval' &&
          ev.data.approval.status === 'pending' &&
          (service.pendingApprovals?.(runId) ?? []).some((p) => p.id === (ev.data as { approval: { id: string } }).approval.id);
        const reply = await assembleRunReply(service, runId, timeout.signal, waiting);
        if (reply.stoppedAt?.stream === 'tool' && reply.stoppedAt.data.phase === 'approval') {
          const a = reply.stoppedAt.data.approval;
          const ask = `Run ${runId} wants to call ${a.tool} ${JSON.stringify(a.args).slice(0, 300)}.\n/approve ${a.id} to let it, /deny ${a.id} <reason> to refuse.`;
          return answer(withPrefix(reply.text ? `${reply.text}\n\n${ask}` : ask), { run_id: runId, status: 'awaiting_approval', approval_id: a.id });
        }
        if (timeout.signal.aborted) {
          return answer(withPrefix(`Run ${runId} is still running; /runs shows its status.`), { run_id: runId, status: 'running' });
        }
        const status = (await service.get(runId))?.status ?? 'unknown';
        const txt = reply.text || (status === 'completed' ? 'Done.' : `Run ${runId} ended: ${status}.`);
        return { conversation_id, run_id: runId, status, messages: splitReply(withPrefix(txt), opts.limit), media: reply.media };
      } finally {
        clearTimeout(timer);
      }
    }
  });
}
