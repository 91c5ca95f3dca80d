/**
 * `runtrail run` and approvals: a tool call that waits for a person is asked about on
 * the terminal (y/N); `--approve-all` or `--deny-all` decide without asking; with neither and no
 * terminal the call is denied at once, saying how to let it through.
 */
import type { AgentEvent } from '../events/agent-event.js';
import type { RunService } from '../runtime/service/run-service.js';
import type { CliDeps } from './cli-io.js';

export type ApprovalPolicy = 'ask' | 'approve-all' | 'deny-all';

export function approvalHandler(service: RunService, runId: string, policy: ApprovalPolicy, deps: Pick<CliDeps, 'ask' | 'stderr'>): (ev: AgentEvent) => void {
  let asking = Promise.resolve();
  const decide = (id: string, decision: 'approve' | 'deny', reason?: string) =>
    service
      .decideApproval(runId, id, { decision, by: 'cli', ...(reason ? { reason } : {}) })
      .catch((e: Error) => void deps.stderr.write(`runtrail: ${e.message}\n`));
  return (ev) => {
    if (ev.stream !== 'tool' || ev.data.phase !== 'approval' || ev.data.approval.status !== 'pending') return;
    const a = ev.data.approval;
    if (policy === 'approve-all') return void decide(a.id, 'approve');
    if (policy === 'deny-all') return void decide(a.id, 'deny', 'denied by --deny-all');
    // one question at a time on the terminal
    asking = asking.then(async () => {
      const answer = deps.ask ? await deps.ask(`\nAllow ${a.tool} ${JSON.stringify(a.args).slice(0, 400)}? [y/N] `) : null;
      if (answer === null) {
        deps.stderr.write(`runtrail: ${a.tool} needs approval and there is no terminal to ask: denied (use --approve-all or --deny-all)\n`);
        await decide(a.id, 'deny', 'no terminal to ask; run with --approve-all to allow such calls');
        return;
      }
      const yes = /^\s*y(es)?\s*$/i.test(answer);
      await decide(a.id, yes ? 'approve' : 'deny', yes ? undefined : 'denied at the terminal');
    });
  };
}
