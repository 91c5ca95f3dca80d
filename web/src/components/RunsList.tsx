import { useEffect, useState } from 'react';
import { api, TERMINAL, type RunStatus } from '../api.js';

/** Polls while any run is live, so statuses stay current without a stream per row. */
export function RunsList({ onOpen, refreshKey }: { onOpen: (id: string) => void; refreshKey: number }) {
  const [runs, setRuns] = useState<RunStatus[]>([]);
  const [total, setTotal] = useState(0);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState('');
  const [loaded, setLoaded] = useState(false);

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (): Promise<void> => {
      try {
        const q = filter ? `&status=${encodeURIComponent(filter)}` : '';
        const r = await api<{ runs: RunStatus[]; total: number }>(`/api/runs?limit=50${q}`);
        if (stop) return;
        setRuns(r.runs);
        setTotal(r.total);
        setError('');
        setLoaded(true);
        timer = setTimeout(() => void load(), r.runs.some((x) => !TERMINAL.has(x.status)) ? 1500 : 5000);
      } catch (e) {
        if (stop) return;
        setError((e as Error).message);
        timer = setTimeout(() => void load(), 5000);
      }
    };
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [filter, refreshKey]);

  return (
    <section className="card runs">
      <div className="row">
        <h2>Runs{loaded ? ` (${total})` : ''}</h2>
        <select value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="filter by status">
          <option value="">all</option>
          {['queued', 'model_thinking', 'tool_executing', 'completed', 'failed', 'cancelled'].map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      {error && <p className="error">{error}</p>}
      {!loaded && !error && <p className="muted">Loading runs…</p>}
      {loaded && !runs.length && <p className="muted">{filter ? `No ${filter} runs.` : 'No runs yet.'}</p>}
      <ul className="run-list">
        {runs.map((r) => (
          <li key={r.run_id}>
            <button className="run-item" onClick={() => onOpen(r.run_id)} data-run={r.run_id}>
              <span className={`pill st-${r.status}`}>{r.status}</span>
              <span className="plugin">{r.plugin}</span>
              <span className="goal">{r.goal}</span>
              <span className="muted small">{r.created_at?.replace('T', ' ').slice(0, 19)}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
