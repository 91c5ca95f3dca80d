import { useEffect, useState } from 'react';
import type { OperationView } from '../run-state.js';

const STATUS_ICON: Record<string, string> = {
  queued: '○',
  started: '▸',
  running: '◌',
  completed: '✓',
  failed: '✗',
  cancelled: '■',
  skipped: '»',
};

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1000)} s`;
}

const LIVE = new Set(['queued', 'started', 'running']);

/** A live operation's duration keeps counting between its events (they can be minutes apart). */
function useNow(live: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [live]);
  return now;
}

function Row({ op, all, order, depth, ended }: { op: OperationView; all: Record<string, OperationView>; order: string[]; depth: number; ended: boolean }) {
  const live = !ended && LIVE.has(op.status);
  const now = useNow(live);
  const children = order.map((id) => all[id]).filter((o) => o && o.parent === op.id);
  const pct = op.percent ?? (op.total ? ((op.current ?? 0) / op.total) * 100 : undefined);
  return (
    <li className={`op status-${op.status}`} style={{ marginLeft: depth ? 12 : 0 }}>
      <div className="op-line">
        <span className="icon" role="img" aria-label={op.status}>
          {STATUS_ICON[op.status] ?? '•'}
        </span>
        <span className="op-id" title={op.id}>
          {op.targetType}
        </span>
        {op.stage && <span className="stage">{op.stage}</span>}
        <span className="status">{op.status}</span>
        <span className="dur">{duration(Math.max(0, (live ? Math.max(now, op.lastTs) : op.lastTs) - op.firstTs))}</span>
      </div>
      {pct !== undefined && (
        <div className="bar" role="progressbar" aria-valuenow={Math.round(pct)} aria-valuemin={0} aria-valuemax={100}>
          <div style={{ width: `${Math.min(100, Math.max(0, pct))}%` }} />
          <span>
            {Math.round(pct)}%{op.total ? ` (${op.current ?? 0}/${op.total})` : ''}
          </span>
        </div>
      )}
      {op.message && <div className="op-msg">{op.message}</div>}
      {children.length > 0 && (
        <ul className="ops">
          {children.map((c) => (
            <Row key={c.id} op={c} all={all} order={order} depth={depth + 1} ended={ended} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** The process timeline: the operation tree with stage, status, progress and duration. */
export function ProcessTimeline({ operations, order, ended = false }: { operations: Record<string, OperationView>; order: string[]; ended?: boolean }) {
  const roots = order.map((id) => operations[id]).filter((o) => o && (!o.parent || !operations[o.parent]));
  if (!roots.length) return <p className="muted">No process events.</p>;
  return (
    <ul className="ops timeline">
      {roots.map((op) => (
        <Row key={op.id} op={op} all={operations} order={order} depth={0} ended={ended} />
      ))}
    </ul>
  );
}
