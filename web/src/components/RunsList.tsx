import { useEffect, useState } from 'react';
import { api, TERMINAL, type PluginInfo, type RunStatus } from '../api.js';
import { formatMs } from '../trace-view.js';
import { formatUsd } from '../usage-summary.js';

const STATUSES = ['queued', 'model_thinking', 'tool_executing', 'awaiting_approval', 'validating', 'completed', 'failed', 'cancelled'];

interface Filters {
  status: string;
  agent: string;
  model: string;
  q: string;
}

function queryOf(f: Filters): string {
  const q = new URLSearchParams({ limit: '50' });
  if (f.status) q.set('status', f.status);
  if (f.agent) q.set('plugin', f.agent);
  if (f.model.trim()) q.set('model', f.model.trim());
  if (f.q.trim()) q.set('q', f.q.trim());
  return q.toString();
}

/**
 * The runs, newest first: status, agent, goal, model, duration, tokens, cost, and a failed run's
 * diagnosis; filtered by status, agent and model, searched by goal. Two ticked runs open side by side.
 * Polls while any run is live, so statuses stay current without a stream per row.
 */
export function RunsList({ onOpen, refreshKey }: { onOpen: (id: string) => void; refreshKey: number }) {
  const [runs, setRuns] = useState<RunStatus[]>([]);
  const [total, setTotal] = useState(0);
  const [filters, setFilters] = useState<Filters>({ status: '', agent: '', model: '', q: '' });
  const [search, setSearch] = useState('');
  const [agents, setAgents] = useState<string[]>([]);
  const [models, setModels] = useState<string[]>([]);
  const [picked, setPicked] = useState<string[]>([]);
  const [error, setError] = useState('');
  const [loaded, setLoaded] = useState(false);

  useEffect(() => {
    api<{ plugins: PluginInfo[] }>('/api/plugins')
      .then((r) => setAgents(r.plugins.map((p) => p.name)))
      .catch(() => undefined);
  }, []);

  // typing in the search box asks the server once the typing pauses
  useEffect(() => {
    const t = setTimeout(() => setFilters((f) => (f.q === search ? f : { ...f, q: search })), 250);
    return () => clearTimeout(t);
  }, [search]);

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (): Promise<void> => {
      try {
        const r = await api<{ runs: RunStatus[]; total: number }>(`/api/runs?${queryOf(filters)}`);
        if (stop) return;
        setRuns(r.runs);
        setTotal(r.total);
        setModels((m) => [...new Set([...m, ...r.runs.map((x) => `${x.provider}:${x.model}`)])].sort());
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
  }, [filters, refreshKey]);

  const pick = (id: string, on: boolean): void => setPicked((p) => (on ? [...p.filter((x) => x !== id), id].slice(-2) : p.filter((x) => x !== id)));
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setFilters({ ...filters, [k]: e.target.value });
  const filtered = Boolean(filters.status || filters.agent || filters.model || filters.q);

  return (
    <section className="card runs">
      <div className="row">
        <h2>Runs{loaded ? ` (${total})` : ''}</h2>
        <button
          className="compare"
          disabled={picked.length !== 2}
          title={picked.length === 2 ? 'open the two ticked runs side by side' : 'tick two runs to compare them'}
          onClick={() => {
            location.hash = `#/compare/${encodeURIComponent(picked[0])}/${encodeURIComponent(picked[1])}`;
          }}
        >
          Compare{picked.length ? ` (${picked.length}/2)` : ''}
        </button>
      </div>
      <div className="filters">
        <input type="search" aria-label="search goals" placeholder="Search goals…" value={search} onChange={(e) => setSearch(e.target.value)} />
        <select value={filters.status} onChange={set('status')} aria-label="filter by status">
          <option value="">any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <select value={filters.agent} onChange={set('agent')} aria-label="filter by agent">
          <option value="">any agent</option>
          {agents.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <input list="run-models" aria-label="filter by model" placeholder="any model" value={filters.model} onChange={set('model')} />
        <datalist id="run-models">
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </div>
      {error && <p className="error">{error}</p>}
      {!loaded && !error && <p className="muted">Loading runs…</p>}
      {loaded && !runs.length && (
        <p className="muted">
          {!filtered
            ? 'No runs yet.'
            : filters.status && !filters.agent && !filters.model && !filters.q
              ? `No ${filters.status} runs.`
              : 'No runs match these filters.'}
        </p>
      )}
      <ul className="run-list">
        {runs.map((r) => (
          <li key={r.run_id} className="run-row">
            <input type="checkbox" aria-label={`compare ${r.run_id}`} checked={picked.includes(r.run_id)} onChange={(e) => pick(r.run_id, e.target.checked)} />
            <button className="run-item" onClick={() => onOpen(r.run_id)} data-run={r.run_id}>
              <span className={`pill st-${r.status}`}>{r.status}</span>
              <span className="plugin">{r.plugin}</span>
              <span className="goal">{r.goal}</span>
              <span className="figs small">
                <span title="model">
                  {r.provider}:{r.model}
                </span>
                <span title="duration">{r.usage?.duration_ms != null ? formatMs(r.usage.duration_ms) : '–'}</span>
                <span title="tokens">{r.usage?.tokens != null ? `${r.usage.tokens.toLocaleString('en-US')} tok` : '–'}</span>
                <span title="cost">{r.usage?.cost_usd != null ? formatUsd(r.usage.cost_usd) : '–'}</span>
                <span className="muted">{r.created_at?.replace('T', ' ').slice(0, 19)}</span>
              </span>
              {r.status === 'failed' && r.diagnosis && (
                <span className="why small" data-testid="run-diagnosis">
                  {r.diagnosis.code}: {r.diagnosis.summary}
                </span>
              )}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
