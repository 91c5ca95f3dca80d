/** POST /api/im/messages { conversation_id, text } — what a chat bot calls; answers with the messages to post. */
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

const LIVE = new Set(['queued', 'created', 'planning', 'model_thinking', 'tool_executing', 'validating']);

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
        const timeout = new AbortController();
        const timer = setTimeout(() => timeout.abort(), opts.waitMs);
        try {
          const reply = await assembleRunReply(service, run.run_id, timeout.signal);
          if (timeout.signal.aborted) {
            return answer(`Run ${run.run_id} is still running; /runs shows its status.`, { run_id: run.run_id, status: 'running' });
          }
          const status = (await service.get(run.run_id))?.status ?? 'unknown';
          const txt = reply.text || (status === 'completed' ? 'Done.' : `Run ${run.run_id} ended: ${status}.`);
          return { conversation_id, run_id: run.run_id, status, messages: splitReply(txt, opts.limit), media: reply.media };
        } finally {
          clearTimeout(timer);
        }
      }
    }
  });
}
