import type { Diagnosis } from '../api.js';

/**
 * A diagnosis as a person reads it: the summary, then the detail with its line breaks kept
 * (stop validation lists one problem per line), the hint and whether a retry may help.
 */
export function DiagnosisBox({ diagnosis, fallback, alert }: { diagnosis: Diagnosis | null; fallback?: string; alert?: boolean }) {
  const severity = diagnosis?.severity ?? 'error';
  return (
    <div className={`diagnosis sev-${severity}`} role={alert ? 'alert' : undefined}>
      <strong>{diagnosis?.summary || fallback}</strong>
      {diagnosis?.code && <span className={`badge sev-${severity}`}>{diagnosis.code}</span>}
      {diagnosis?.detail && <p className="detail">{diagnosis.detail}</p>}
      {diagnosis?.hint && <p className="hint">Hint: {diagnosis.hint}</p>}
      {diagnosis?.retryable && <p className="hint">retryable</p>}
    </div>
  );
}
