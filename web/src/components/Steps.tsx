import { useEffect, useRef, useState } from 'react';
import type { StepView } from '../run-state.js';
import { useRunView } from '../use-run-view.js';
import { ApprovalControls } from './ApprovalControls.js';
import { DiagnosisBox } from './DiagnosisBox.js';
import { ProcessTimeline } from './ProcessTimeline.js';

// Plain glyphs (coloured by CSS): emoji fonts are not a given on a self-hosted box.
const ICON: Record<string, string> = { start: '◌', ok: '✓', fail: '✗' };

/** A step asked to be shown from elsewhere (the waterfall): `n` counts the asks, so the same step can be asked again. */
export interface StepFocus {
  index: number;
  n: number;
}

/** A subagent's own steps and timeline, inside its parent's `agent` step, followed live. */
function ChildRun({ runId }: { runId: string }) {
  const { view } = useRunView(runId);
  return (
    <div className="child-run" data-testid="child-run">
      <p className="small">
        Subagent run <a href={`#/runs/${encodeURIComponent(runId)}`}>{runId}</a>
        {view.ended ? ` · ${view.ended === 'done' ? 'completed' : 'ended with an error'}` : ' · running'}
      </p>
      <Steps steps={view.steps} runId={runId} />
      {view.operationOrder.length > 0 && <ProcessTimeline operations={view.operations} order={view.operationOrder} ended={view.ended !== null} />}
    </div>
  );
}

function Step({ s, focus, runId }: { s: StepView; focus?: StepFocus | null; runId: string }) {
  const waiting = s.approval?.status === 'pending';
  const [open, setOpen] = useState(waiting);
  const ref = useRef<HTMLLIElement>(null);
  const focused = focus?.index === s.index;
  useEffect(() => {
    if (!focused) return;
    setOpen(true);
    ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [focused, focus?.n]);
  // a call that starts waiting for a person opens itself: the buttons must be seen
  useEffect(() => {
    if (waiting) setOpen(true);
  }, [waiting]);
  const title = s.name || s.type;
  const child = s.node?.type === 'run' ? s.node.id : null;
  const hasMore = Boolean(s.diagnosis || s.result || s.args || s.text || s.approval || child);
  return (
    <li ref={ref} className={`step phase-${s.phase || 'none'}${focused ? ' focused' : ''}`} data-step-index={s.index}>
      <button className="step-head" onClick={() => setOpen(!open)} disabled={!hasMore} aria-expanded={open}>
        <span className="icon" role="img" aria-label={s.phase || 'step'}>{ICON[s.phase] ?? '•'}</span>
        <span className="kind">{s.type}</span>
        <span className="name">{child ? `${s.node!.label || title}` : title}</span>
        {waiting && <span className="badge sev-warning">awaiting approval</span>}
        {s.diagnosis && <span className={`badge sev-${s.diagnosis.severity}`}>{s.diagnosis.code}</span>}
      </button>
      {open && (
        <div className="step-body">
          {s.approval && <ApprovalControls runId={runId} approval={s.approval} />}
          {s.diagnosis && <DiagnosisBox diagnosis={s.diagnosis} />}
          {s.text && <p>{s.text}</p>}
          {s.args !== undefined && s.args !== null && (
            <details>
              <summary>args</summary>
              <pre>{JSON.stringify(s.args, null, 2)}</pre>
            </details>
          )}
          {child && <ChildRun runId={child} />}
          {s.result && (
            <details open={s.phase === 'fail'}>
              <summary>result</summary>
              <pre>{s.result.length > 4000 ? `${s.result.slice(0, 4000)}…` : s.result}</pre>
            </details>
          )}
        </div>
      )}
    </li>
  );
}

export function Steps({ steps, focus, runId }: { steps: StepView[]; focus?: StepFocus | null; runId: string }) {
  if (!steps.length) return <p className="muted">No steps yet.</p>;
  return (
    <ol className="steps">
      {steps.map((s) => (
        <Step key={s.index} s={s} focus={focus} runId={runId} />
      ))}
    </ol>
  );
}
