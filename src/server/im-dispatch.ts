/**
 * The one IM command layer: what a chat message means for the runs of its conversation. Every front
 * door that speaks chat (POST /api/im/messages, the Telegram, Slack and Feishu channels) hands a
 * message here and gets back what to do: answer with text, or follow a run's reply. Who may write
 * is the front door's check; which agent, which run and what the text says are decided here only.
 */
import { RUN_STATUSES } from '../events/agent-event.js';
import type { RunServiceApi, RunStatusFile } from '../runtime/run-service-types.js';
import { toHttpError } from './http-error.js';
import { coerceInput, IM_HELP, parseImCommand } from './im-command.js';
import type { PluginInfo } from './plugin-catalog.js';
import { propertyTypes } from './plugin-catalog.js';

export interface ImMessage {
  conversationId: string;
  text: string;
  /** Files the person sent with it, already in the upload folder: they fill the agent's file inputs. */
  files?: Array<{ path: string; name: string }>;
  /** The person, as an approval records who decided it (`telegram:123456`); absent over HTTP. */
  who?: string;
}

export interface ImDispatchOptions {
  /** What each agent takes, now (they can change under `serve --watch`). */
  catalog: () => PluginInfo[];
  /** The agent plain text goes to. */
  chatPlugin: string;
  /** The agents this front door may start; absent: every agent. */
  agents?: readonly string[];
  /** Creates a run as this front door does (its refusals: a script model, files outside the upload roots). */
  createRun: (req: Record<string, unknown>) => Promise<RunStatusFile>;
}

/** What a message comes to: text to answer with, or a run whose reply the front door follows. */
export type ImOutcome =
  | { kind: 'answer'; text: string; runId?: string; status?: string; error?: string }
  | { kind: 'follow'; runId: string; started: boolean; prefix?: string };

const LIVE = new Set<string>(RUN_STATUSES.filter((s) => !['completed', 'failed', 'cancelled'].includes(s)));

export function isLiveStatus(status: string): boolean {
  return LIVE.has(status);
}

export async function conversationRuns(service: RunServiceApi, conversationId: string): Promise<RunStatusFile[]> {
  const { runs } = await service.list({ limit: 500 });
  return runs.filter((r) => r.conversation_id === conversationId);
}

const answer = (text: string, extra: Omit<Extract<ImOutcome, { kind: 'answer' }>, 'kind' | 'text'> = {}): ImOutcome => ({ kind: 'answer', text, ...extra });

function notAllowed(name: string, agents: readonly string[]): ImOutcome {
  return answer(`${name} cannot be started from this chat (allowed here: ${agents.length ? agents.join(', ') : 'none'}).`, { error: 'agent_not_allowed' });
}

/** The agent's file inputs that the key=value pairs left empty, filled with the sent files in order. */
function withFiles(
  input: Record<string, unknown>,
  info: PluginInfo | undefined,
  files: ImMessage['files'],
): { input: Record<string, unknown>; unused: string[] } {
  const out = { ...input };
  const open = (info?.fileInputs ?? []).filter((k) => out[k] === undefined);
  const unused: string[] = [];
  for (const f of files ?? []) {
    const key = open.shift();
    if (key) out[key] = f.path;
    else unused.push(f.name);
  }
  return { input: out, unused };
}

export async function dispatchImMessage(service: RunServiceApi, msg: ImMessage, opts: ImDispatchOptions): Promise<ImOutcome> {
  const conversation_id = msg.conversationId;
  const cmd = parseImCommand(msg.text);
  const by = 'im' as const;
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
        const reason = cmd.kind === 'deny' && cmd.reason ? cmd.reason : undefined;
        const a = await service.decideApproval(target.run_id, cmd.approvalId, {
          decision: cmd.kind,
          ...(reason ? { reason } : {}),
          by,
          ...(msg.who ? { who: msg.who } : {}),
        });
        if (a.status === 'denied') return answer(`Denied ${a.tool} (${a.id}); the agent reads why and goes on.`, { runId: target.run_id });
        return { kind: 'follow', runId: target.run_id, started: false, prefix: `Approved ${a.tool} (${a.id}).` };
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
        return answer(`Run ${r.run_id} is ${r.status}.`, { runId: r.run_id });
      } catch (err) {
        return answer(`Cannot cancel ${target.run_id}: ${toHttpError(err).message}`);
      }
    }
    case 'run':
    case 'chat': {
      let req: Record<string, unknown>;
      let unusedFiles: string[] = [];
      if (cmd.kind === 'run') {
        if (opts.agents && !opts.agents.includes(cmd.plugin)) return notAllowed(cmd.plugin, opts.agents);
        const info = opts.catalog().find((p) => p.name === cmd.plugin);
        const filled = withFiles(coerceInput(cmd.input, info ? propertyTypes(info) : {}), info, msg.files);
        unusedFiles = filled.unused;
        req = { plugin: cmd.plugin, input: filled.input, conversation_id, ...(cmd.goal ? { goal: cmd.goal } : {}) };
      } else {
        if (!cmd.text && !msg.files?.length) return answer(IM_HELP);
        // a conversation whose run is live steers that run instead of starting another
        const live = cmd.text ? (await conversationRuns(service, conversation_id)).find((r) => LIVE.has(r.status)) : undefined;
        if (live && service.sendMessage) {
          try {
            await service.sendMessage(live.run_id, { text: cmd.text, mode: 'steer', from: by });
            return answer(`Sent to run ${live.run_id}: it reaches the agent at its next step.`, { runId: live.run_id, status: live.status });
          } catch (err) {
            if (toHttpError(err).status !== 409) throw err;
            // finished meanwhile: the text starts a new chat run below
          }
        }
        if (opts.agents && !opts.agents.includes(opts.chatPlugin)) return notAllowed(opts.chatPlugin, opts.agents);
        const info = opts.catalog().find((p) => p.name === opts.chatPlugin);
        const filled = withFiles({}, info, msg.files);
        unusedFiles = filled.unused;
        req = { plugin: opts.chatPlugin, input: filled.input, goal: cmd.text || (info?.defaultGoal ?? ''), conversation_id };
      }
      if (unusedFiles.length) {
        const name = String(req.plugin);
        const takers = opts.catalog().filter((p) => p.fileInputs.length && (!opts.agents || opts.agents.includes(p.name)));
        const offer = takers.length ? ` Agents that take files: ${takers.map((p) => `${p.name} (${p.fileInputs.join(', ')})`).join('; ')}.` : '';
        return answer(`${name} has no file input left for ${unusedFiles.join(', ')}; nothing was started.${offer}`, { error: 'unused_files' });
      }
      let run: RunStatusFile;
      try {
        run = await opts.createRun(req);
      } catch (err) {
        const h = toHttpError(err);
        if (h.status >= 500) throw err;
        if (cmd.kind === 'chat' && !msg.files?.length) return answer(IM_HELP);
        const issues = Array.isArray(h.details.issues) ? (h.details.issues as Array<{ path: string; message: string }>) : [];
        const lines = issues.map((i) => `- ${i.path}: ${i.message}`).join('\n');
        return answer(`Cannot start ${String(req.plugin)}: ${h.message}${lines && !h.message.includes(lines) ? `\n${lines}` : ''}`, { error: h.code });
      }
      return { kind: 'follow', runId: run.run_id, started: true };
    }
  }
}
