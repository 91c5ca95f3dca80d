import { useEffect, useState } from 'react';
import { api } from '../api.js';

interface WebhooksView {
  targets: Array<{ url: string; source: string; signed: boolean }>;
  messages: Array<{ webhook_id: string; type: string; target: number; state: string; attempts: number; next_attempt_at: number | null }>;
  attempts: Array<{
    webhook_id: string;
    attempt: number;
    at: string;
    http_status?: number;
    error?: string;
    outcome: string;
    duration_ms: number;
    redelivery?: boolean;
  }>;
}

/** A run's completion webhooks: each message, its attempts, and a redelivery. Shown only when the run has any. */
export function WebhooksCard({ runId, ended }: { runId: string; ended: boolean }) {
  const [view, setView] = useState<WebhooksView | null>(null);
  const [tick, setTick] = useState(0);
  const [error, setError] = useState('');

  useEffect(() => {
    let stop = false;
    api<WebhooksView>(`/api/runs/${encodeURIComponent(runId)}/webhooks`).then(
      (v) => !stop && setView(v),
      () => !stop && setView(null),
    );
    // attempts go on after the run has ended (retries)
    const t = setTimeout(() => setTick((n) => n + 1), 3000);
    return () => {
      stop = true;
      clearTimeout(t);
    };
  }, [runId, tick]);

  if (!view?.targets.length) return null;
  const redeliver = async (): Promise<void> => {
    try {
      await api(`/api/runs/${encodeURIComponent(runId)}/webhooks/redeliver`, { method: 'POST', body: '{}' });
      setTick((n) => n + 1);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section className="card" data-testid="webhooks">
      <div className="row">
        <h3>Webhooks</h3>
        {ended && (
          <button className="secondary" onClick={() => void redeliver()}>
            Redeliver
          </button>
        )}
      </div>
      {error && <p className="error">{error}</p>}
      {view.messages.length === 0 && <p className="muted small">To {view.targets.map((t) => t.url).join(', ')} when the run ends.</p>}
      <ul className="small">
        {view.messages.map((m) => (
          <li key={m.webhook_id}>
            <span className={`pill st-${m.state === 'delivered' ? 'completed' : m.state === 'failed' ? 'failed' : 'queued'}`}>{m.state}</span> {m.type} →{' '}
            {view.targets[m.target]?.url}{' '}
            <span className="muted">
              ({m.attempts} attempt{m.attempts === 1 ? '' : 's'}
              {m.next_attempt_at ? `, next ${new Date(m.next_attempt_at).toISOString().slice(11, 19)}` : ''})
            </span>
            <ul>
              {view.attempts
                .filter((a) => a.webhook_id === m.webhook_id)
                .map((a) => (
                  <li key={`${a.attempt}-${a.at}`} className="muted">
                    #{a.attempt} {a.at.slice(11, 19)} {a.http_status ? `HTTP ${a.http_status}` : a.error} · {a.duration_ms} ms · {a.outcome}
                    {a.redelivery ? ' (redelivery)' : ''}
                  </li>
                ))}
            </ul>
          </li>
        ))}
      </ul>
    </section>
  );
}
