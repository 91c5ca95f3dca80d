import { useEffect, useRef, useState } from 'react';
import type { StepView } from '../run-state.js';
import { DiagnosisBox } from './DiagnosisBox.js';

// Plain glyphs (coloured by CSS): emoji fonts are not a given on a self-hosted box.
const ICON: Record<string, string> = { start: '◌', ok: '✓', fail: '✗' };

/** A step asked to be shown from elsewhere (the waterfall): `n` counts the asks, so the same step can be asked again. */
export interface StepFocus {
  index: number;
  n: number;
}

function Step({ s, focus }: { s: StepView; focus?: StepFocus | null }) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLLIElement>(null);
  const focused = focus?.index === s.index;
  useEffect(() => {
    if (!focused) return;
    setOpen(true);
    ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [focused, focus?.n]);
  const title = s.name || s.type;
  const hasMore = Boolean(s.diagnosis || s.result || s.args || s.text);
  return (
    <li ref={ref} className={`step phase-${s.phase || 'none'}${focused ? ' focused' : ''}`} data-step-index={s.index}>
      <button className="step-head" onClick={() => setOpen(!open)} disabled={!hasMore} aria-expanded={open}>
        <span className="icon" role="img" aria-label={s.phase || 'step'}>{ICON[s.phase] ?? '•'}</span>
        <span className="kind">{s.type}</span>
        <span className="name">{title}</span>
        {s.diagnosis && <span className={`badge sev-${s.diagnosis.severity}`}>{s.diagnosis.code}</span>}
      </button>
      {open && (
        <div className="step-body">
          {s.diagnosis && <DiagnosisBox diagnosis={s.diagnosis} />}
          {s.text && <p>{s.text}</p>}
          {s.args !== undefined && s.args !== null && (
            <details>
              <summary>args</summary>
              <pre>{JSON.stringify(s.args, null, 2)}</pre>
            </details>
          )}
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

export function Steps({ steps, focus }: { steps: StepView[]; focus?: StepFocus | null }) {
  if (!steps.length) return <p className="muted">No steps yet.</p>;
  return (
    <ol className="steps">
      {steps.map((s) => (
        <Step key={s.index} s={s} focus={focus} />
      ))}
    </ol>
  );
}
