import { useState } from 'react';
import type { StepView } from '../run-state.js';
import { DiagnosisBox } from './DiagnosisBox.js';

// Plain glyphs (coloured by CSS): emoji fonts are not a given on a self-hosted box.
const ICON: Record<string, string> = { start: '◌', ok: '✓', fail: '✗' };

function Step({ s }: { s: StepView }) {
  const [open, setOpen] = useState(false);
  const title = s.name || s.type;
  const hasMore = Boolean(s.diagnosis || s.result || s.args || s.text);
  return (
    <li className={`step phase-${s.phase || 'none'}`}>
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

export function Steps({ steps }: { steps: StepView[] }) {
  if (!steps.length) return <p className="muted">No steps yet.</p>;
  return (
    <ol className="steps">
      {steps.map((s) => (
        <Step key={s.index} s={s} />
      ))}
    </ol>
  );
}
