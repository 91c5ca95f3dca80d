import { useState } from 'react';
import { api } from '../api.js';
import type { ApprovalView } from '../run-state.js';

/** Approve / Deny on a tool call that waits for a person; the decision shows once it is made. */
export function ApprovalControls({ runId, approval }: { runId: string; approval: ApprovalView }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  if (approval.status !== 'pending') {
    return (
      <p className={`approval approval-${approval.status}`} data-testid="approval-decision">
        {approval.status === 'approved' ? 'Approved' : 'Denied'}
        {approval.by ? ` by ${approval.by}` : ''}
        {approval.reason ? `: ${approval.reason}` : ''}
      </p>
    );
  }
  const decide = async (decision: 'approve' | 'deny') => {
    setBusy(true);
    setError('');
    try {
      await api(`/api/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(approval.id)}`, {
        method: 'POST',
        headers: { 'x-runtrail-client': 'web' },
        body: JSON.stringify({ decision, ...(decision === 'deny' && reason.trim() ? { reason: reason.trim() } : {}) }),
      });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="approval approval-pending" role="group" aria-label={`approval for ${approval.tool}`}>
      <p>
        <strong>{approval.tool}</strong> waits for your approval.
      </p>
      <pre>{JSON.stringify(approval.args, null, 2)}</pre>
      <div className="row">
        <button className="secondary" onClick={() => void decide('approve')} disabled={busy}>
          Approve
        </button>
        <label className="small">
          Reason <input value={reason} onChange={(e) => setReason(e.target.value)} placeholder="why not (optional)" />
        </label>
        <button className="danger" onClick={() => void decide('deny')} disabled={busy}>
          Deny
        </button>
      </div>
      {error && <p className="error">{error}</p>}
    </div>
  );
}
