/** POST /api/im/messages { conversation_id, text } — what a chat bot calls; answers with the messages to post. */
import { RUN_STATUSES, type AgentEvent } from '../events/agent-event.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RunServiceApi, RunStatusFile } from '../runtime/run-service-types.js';
import { invalidBody, issuesFromZod, toHttpError } from './http-error.js';
import { coerceInput, IM_HELP, parseImCommand } from './im-command.js';
import { assembleRunReply, splitReply } from './im-reply.js';
import type { PluginInfo } from './plugin-catalog.js';
import { propertyTypes } from './plugin-catalog.js';

const ImBody = z.object({
  conversation_id: z.string().trim().min(1).max(200).regex(/^[A-Za-z0-9_.:@-]+$/, 'letters, digits and _ . : @ - only'),
  text: z.string().max(20_000),
});

export interface ImOptions {
  /** characters per message (4,000) */
  limit: number;
  /** how long to wait for a run before answering "still running" */
  waitMs: number;
  /** The service's plugins now (they can change under `serve --watch`). */
  plugins: () => PluginInfo[];
  chatPlugin: string;
}

const LIVE = new Set<string>(RUN_STATUSES.filter((s) => !['completed', 'failed', 'cancelled'].includes(s)));

async function conversationRuns(service: RunServiceApi, conversationId: string): Promise<RunStatusFile[]> {
  const { runs } = await service.list({ limit: 500 });
  return runs.filter((r) => r.conversation_id === conversationId);
}

export function registerImRoute(app: FastifyInstance, service: RunServiceApi, opts: ImOptions): void {
  app.post('/api/im/messages', async (req) => {
    const parsed = ImBody.safeParse(req.body);
    if (!parsed.success) throw invalidBody(issuesFromZod(parsed.error.issues));
    const { conversation_id, text } = parsed.data;
    const answer = (t: string, extra: Record<string, unknown> = {}) => ({ conversation_id, messages: splitReply(t, opts.limit), media: [] as string[], ...extra });

    const cmd = parseImCommand(text);
    switch (cmd.kind) {
      case 'help':
        return answer(IM_HELP);
      case 'invalid':
        return answer(`${cmd.message}\n\n${IM_HELP}`);
      case 'runs': {
        const runs = await conversationRuns(service, conversation_id);
        if (!runs.length) return answer('No runs in this conversation yet. /help lists the commands.');
        return answer(runs.map((r) => `${r.run_id} · ${r.plugin} · ${r.status}${r.goal ? ` · ${r.goal.slice(0, 80)}` : ''}`).join('\n'));
      }
      case 'approve':
      case 'deny': {
        const runs = (await conversationRuns(service, conversation_id)).filter((r) => LIVE.has(r.status));
        const target = runs.find((r) => service.pendingApprovals?.(r.run_id).some((a) => a.id === cmd.approvalId)) ?? runs[0];
        if (!target || !service.decideApproval) return answer(`No live run in this conversation waits for ${cmd.approvalId}.`);
        try {
          const a = await service.decideApproval(target.run_id, cmd.approvalId, { decision: cmd.kind, ...(cmd.kind === 'deny' && cmd.reason ? { reason: cmd.reason } : {}), by: 'im' });
          if (a.status === 'denied') return answer(`Denied ${a.tool} (${a.id}); the agent reads why and goes on.`, { run_id: target.run_id });
          return await runReply(target.run_id, `Approved ${a.tool} (${a.id}).`);
        } catch (err) {
          return answer(`Cannot decide ${cmd.approvalId}: ${toHttpError(err).message}`);
        }
      }
      case 'cancel': {
        const runs = await conversationRuns(service, conversation_id);
        const target = cmd.runId ? runs.find((r) => r.run_id === cmd.runId) : runs.find((r) => LIVE.has(r.status));
        if (!target) return answer(cmd.runId ? `No run ${cmd.runId} in this conversation.` : 'No live run to cancel.');
        try {
          const r = await service.cancel(target.run_id);
          return answer(`Run ${r.run_id} is ${r.status}.`, { run_id: r.run_id });
        } catch (err) {
          return answer(`Cannot cancel ${target.run_id}: ${toHttpError(err).message}`);
        }
      }
      case 'run':
      case 'chat': {
        let req: Record<string, unknown>;
        if (cmd.kind === 'run') {
          const info = opts.plugins().find((p) => p.name === cmd.plugin);
          const input = coerceInput(cmd.input, info ? propertyTypes(info) : {});
          req = { plugin: cmd.plugin, input, conversation_id, ...(cmd.goal ? { goal: cmd.goal } : {}) };
        } else {
          if (!cmd.text) return answer(IM_HELP);
          // a conversation whose run is live steers that run instead of starting another
          const live = (await conversationRuns(service, conversation_id)).find((r) => LIVE.has(r.status));
          if (live && service.sendMessage) {
            try {
              await service.sendMessage(live.run_id, { text: cmd.text, mode: 'steer', from: 'im' });
              return answer(`Sent to run ${live.run_id}: it reaches the agent at its next step.`, { run_id: live.run_id, status: live.status });
            } catch (err) {
              if (toHttpError(err).status !== 409) throw err;
              // finished meanwhile: the text starts a new chat run below
            }
          }
          req = { plugin: opts.chatPlugin, input: {}, goal: cmd.text, conversation_id };
        }
        let run: RunStatusFile;
        try {
          run = await service.create(req, { claw: 'im' });
        } catch (err) {
          const h = toHttpError(err);
          if (h.status >= 500) throw err;
          if (cmd.kind === 'chat') return answer(IM_HELP);
          const issues = Array.isArray(h.details.issues) ? (h.details.issues as Array<{ path: string; message: string }>) : [];
          const lines = issues.map((i) => `- ${i.path}: ${i.message}`).join('\n');
          return answer(`Cannot start ${cmd.plugin}: ${h.message}${lines && !h.message.includes(lines) ? `\n${lines}` : ''}`, { error: h.code });
        }
        return runReply(run.run_id);
      }
    }

    /** Waits for the run's reply; a tool call that needs approval ends the wait with how to decide it. */
    async function runReply(runId: string, prefix = '') {
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), opts.waitMs);
      const withPrefix = (t: string) => (prefix ? `${prefix}\n\n${t}` : t);
      try {
        // history holds earlier approvals too: only one still waiting ends the wait
        const waiting = (ev: AgentEvent) =>
          ev.stream === 'tool' && ev.data.phase === 'approval' && ev.data.approval.status === 'pending' && (service.pendingApprovals?.(runId) ?? []).some((p) => p.id === (ev.data as { approval: { id: string } }).approval.id);
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
