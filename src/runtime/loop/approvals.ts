/**
 * A person in the loop: per-tool permissions (`allow | ask | deny`, by exact name,
 * glob or `*`), and the broker that holds a run's `ask` calls until someone decides — from the API,
 * the page, the IM endpoint or the CLI — or the approval timeout denies them.
 */
import { randomBytes } from 'node:crypto';
import picomatch from 'picomatch';
import type { DecisionSource, RunStatus } from '../../events/agent-event.js';
import type { StepApproval } from '../../events/engine-event.js';
import type { PublishFn } from '../run-publisher.js';

export type Permission = 'allow' | 'ask' | 'deny';

export const DEFAULT_APPROVAL_TIMEOUT_S = 600;

/** The rule for `tool`: its exact name, else the most specific matching glob, else `*`, else allow. */
export function permissionFor(rules: Record<string, Permission> | undefined, tool: string): Permission {
  if (!rules) return 'allow';
  if (rules[tool]) return rules[tool];
  let best: { len: number; rule: Permission } | null = null;
  for (const [pattern, rule] of Object.entries(rules)) {
    if (pattern === '*' || !/[*?[\]{}]/.test(pattern)) continue;
    if (picomatch.isMatch(tool, pattern) && (!best || pattern.length > best.len)) best = { len: pattern.length, rule };
  }
  return best?.rule ?? rules['*'] ?? 'allow';
}

export interface ApprovalDecision {
  approved: boolean;
  by: DecisionSource;
  reason?: string;
  /** the person, when the front door knows */
  who?: string;
  /** the run was cancelled while the call waited */
  cancelled?: boolean;
}

export interface ApprovalCall {
  name: string;
  toolCallId: string;
  args: unknown;
}

interface Waiting {
  approval: StepApproval;
  call: ApprovalCall;
  settle(d: ApprovalDecision): void;
}

export type DecideResult = { ok: true; approval: StepApproval } | { ok: false; code: 'not_found' | 'already_decided'; approval?: StepApproval };

function argsObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}

/** One run's approvals. `setState` moves the run to awaiting_approval and back. */
export class ApprovalBroker {
  private readonly waiting = new Map<string, Waiting>();
  private readonly decided = new Map<string, StepApproval>();

  constructor(
    private readonly o: {
      publish: PublishFn;
      setState(s: Extract<RunStatus, 'awaiting_approval' | 'tool_executing'>): void;
      timeoutMs: number;
      signal: AbortSignal;
      /** A resumed run: the approval its dead process asked for this call (asked again with the same
       *  id, or its decision kept when one had arrived). */
      prior?: (toolCallId: string) => { id: string; status: 'pending' | 'approved' | 'denied'; by?: string; reason?: string; who?: string } | undefined;
    },
  ) {}

  /** Holds the call until a decision; publishes the pending approval and then the decision. */
  request(call: ApprovalCall): Promise<ApprovalDecision> {
    const before = this.o.prior?.(call.toolCallId);
    if (before && before.status !== 'pending') {
      const by = (before.by ?? 'api') as DecisionSource;
      this.decided.set(before.id, {
        id: before.id,
        status: before.status,
        tool: call.name,
        args: argsObject(call.args),
        by,
        ...(before.who ? { who: before.who } : {}),
        ...(before.reason ? { reason: before.reason } : {}),
      });
      return Promise.resolve({
        approved: before.status === 'approved',
        by,
        ...(before.reason ? { reason: before.reason } : {}),
        ...(before.who ? { who: before.who } : {}),
      });
    }
    const id = before?.id ?? `apr_${randomBytes(5).toString('hex')}`;
    const approval: StepApproval = { id, status: 'pending', tool: call.name, args: argsObject(call.args) };
    return new Promise<ApprovalDecision>((resolve) => {
      let done = false;
      const finish = (d: ApprovalDecision) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.o.signal.removeEventListener('abort', onAbort);
        this.waiting.delete(id);
        if (!d.cancelled) {
          const final: StepApproval = {
            ...approval,
            status: d.approved ? 'approved' : 'denied',
            by: d.by,
            ...(d.who ? { who: d.who } : {}),
            ...(d.reason ? { reason: d.reason } : {}),
          };
          this.decided.set(id, final);
          this.o.publish('tool', { phase: 'approval', name: call.name, toolCallId: call.toolCallId, approval: final });
        }
        if (this.waiting.size === 0) this.o.setState('tool_executing');
        resolve(d);
      };
      const onAbort = () => finish({ approved: false, by: 'api', cancelled: true });
      const timer = setTimeout(
        () => finish({ approved: false, by: 'timeout', reason: `no decision within ${Math.round(this.o.timeoutMs / 1000)} s` }),
        this.o.timeoutMs,
      );
      timer.unref?.();
      this.waiting.set(id, { approval, call, settle: finish });
      this.o.publish('tool', { phase: 'approval', name: call.name, toolCallId: call.toolCallId, approval });
      this.o.setState('awaiting_approval');
      if (this.o.signal.aborted) onAbort();
      else this.o.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  decide(id: string, decision: 'approve' | 'deny', by: DecisionSource, reason?: string, who?: string): DecideResult {
    const w = this.waiting.get(id);
    if (!w) {
      const d = this.decided.get(id);
      return d ? { ok: false, code: 'already_decided', approval: d } : { ok: false, code: 'not_found' };
    }
    w.settle({ approved: decision === 'approve', by, ...(reason ? { reason } : {}), ...(who ? { who } : {}) });
    return { ok: true, approval: this.decided.get(id)! };
  }

  pending(): StepApproval[] {
    return [...this.waiting.values()].map((w) => w.approval);
  }
}
