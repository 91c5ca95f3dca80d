import { useEffect, useState } from 'react';
import { api, type RunStatus } from '../api.js';
import { Markdown } from './Markdown.js';

/** A chat's runs as one conversation: each run's goal and answer in order, this run among them. */
export function Conversation({ runId, conversationId, refreshKey }: { runId: string; conversationId: string; refreshKey: string }) {
  const [runs, setRuns] = useState<RunStatus[]>([]);
  useEffect(() => {
    let stop = false;
    api<{ runs: RunStatus[] }>(`/api/runs?conversation=${encodeURIComponent(conversationId)}&limit=100`)
      .then((r) => !stop && setRuns([...r.runs].reverse()))
      .catch(() => undefined);
    return () => {
      stop = true;
    };
  }, [conversationId, refreshKey]);
  if (runs.length < 2) return null;
  return (
    <section className="card" data-testid="conversation">
      <h3>Conversation ({runs.length} runs)</h3>
      <ol className="conversation">
        {runs.map((r) => (
          <li key={r.run_id} className={r.run_id === runId ? 'current' : ''}>
            <div className="bubble user">{r.goal}</div>
            <div className="bubble assistant">
              {r.final_answer ? <Markdown text={r.final_answer} /> : <span className="muted">{r.status}</span>}
              <a className="small" href={`#/runs/${encodeURIComponent(r.run_id)}`}>
                {r.run_id === runId ? 'this run' : r.run_id}
              </a>
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
}
