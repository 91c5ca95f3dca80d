import { useEffect, useReducer, useState } from 'react';
import { api, ApiError, TERMINAL, type RunStatus } from '../api.js';
import { applyFrame, emptyRunView, type RunView } from '../run-state.js';
import { followRun, type WireFrame } from '../run-stream.js';
import { Artifacts } from './Artifacts.js';
import { Markdown } from './Markdown.js';
import { ProcessTimeline } from './ProcessTimeline.js';
import { Steps, type StepFocus } from './Steps.js';
import { TodoList, todosOf, type Todo } from './TodoList.js';
import { DiagnosisBox } from './DiagnosisBox.js';
import { MetricsPanel } from './MetricsPanel.js';
import { Waterfall } from './Waterfall.js';
import { WebhooksCard } from './WebhooksCard.js';
import type { RunTraceView } from '../trace-view.js';

type Action = { frame: WireFrame } | { reset: true };

function reducer(s: RunView, a: Action): RunView {
  return 'reset' in a ? emptyRunView() : applyFrame(s, a.frame);
}

export function RunPage({ runId }: { runId: string }) {
  const [view, dispatch] = useReducer(reducer, undefined, emptyRunView);
  const [conn, setConn] = useState('connecting');
  const [status, setStatus] = useState<RunStatus | null>(null);
  const [todos, setTodos] = useState<Todo[]>([]);
  const [metrics, setMetrics] = useState<unknown>(null);
  const [trace, setTrace] = useState<{ view: RunTraceView; at: number } | null>(null);
  const [focus, setFocus] = useState<StepFocus | null>(null);
  const [error, setError] = useState('');
  const [notFound, setNotFound] = useState(false);

  useEffect(() => {
    dispatch({ reset: true });
    setNotFound(false);
    setTrace(null);
    setFocus(null);
    return followRun(runId, { onFrame: (frame) => dispatch({ frame }), onState: setConn });
  }, [runId]);

  // Status, plan, trace and metrics are not on the wire: poll them while the run is live, once more at the end.
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (): Promise<void> => {
      try {
        // the status first: a run that does not exist is not asked for its plan and trace
        const s = await api<RunStatus>(`/api/runs/${encodeURIComponent(runId)}`);
        const [p, t] = await Promise.all([
          api<{ todo: unknown }>(`/api/runs/${encodeURIComponent(runId)}/plan`),
          api<RunTraceView>(`/api/runs/${encodeURIComponent(runId)}/trace`),
        ]);
        if (stop) return;
        setStatus(s);
        setTodos(todosOf(p.todo));
        setTrace({ view: t, at: Date.now() });
        if (TERMINAL.has(s.status)) {
          const m = await api<{ metrics: unknown }>(`/api/runs/${encodeURIComponent(runId)}/metrics`);
          if (!stop) setMetrics(m.metrics);
          return;
        }
      } catch (e) {
        if (stop) return;
        // a run that does not exist will not appear by polling for it
        if (e instanceof ApiError && e.status === 404) {
          setNotFound(true);
          return;
        }
        setError((e as Error).message);
      }
      if (!stop) timer = setTimeout(() => void load(), 1000);
    };
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [runId, view.ended]);

  const cancel = async (): Promise<void> => {
    try {
      setStatus(await api<RunStatus>(`/api/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST' }));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  if (notFound || conn === 'not_found') {
    return (
      <div className="run-page">
        <section className="card">
          <h2 className="run-id">{runId}</h2>
          <p className="error" role="alert">
            No run with this id on this server.
          </p>
          <a href="#/">Back to the runs</a>
        </section>
      </div>
    );
  }

  const live = status ? !TERMINAL.has(status.status) : true;
  return (
    <div className="run-page">
      <section className="card">
        <div className="row">
          <h2 className="run-id">{runId}</h2>
          <span className={`pill st-${status?.status ?? 'queued'}`} data-testid="run-status">
            {status?.status ?? '…'}
          </span>
          <span className={`conn conn-${conn}`} title="stream">
            {conn}
          </span>
          {live && (
            <button className="danger" onClick={() => void cancel()}>
              Cancel
            </button>
          )}
        </div>
        {status && (
          <p className="muted small">
            {status.plugin} · {status.provider}:{status.model} · {status.goal}
          </p>
        )}
        {status?.trigger && (
          <p className="small" data-testid="trigger">
            Started by schedule <strong>{status.trigger.schedule_id}</strong> for its fire time {status.trigger.fire_time.replace('T', ' ').slice(0, 19)}
          </p>
        )}
        {status?.parent_run_id && (
          <p className="small">
            Subagent of <a href={`#/runs/${encodeURIComponent(status.parent_run_id)}`}>{status.parent_run_id}</a>
          </p>
        )}
        {status?.children && status.children.length > 0 && (
          <p className="small" data-testid="children">
            Subagents:{' '}
            {status.children.map((c, i) => (
              <span key={c}>
                {i ? ', ' : ''}
                <a href={`#/runs/${encodeURIComponent(c)}`}>{c}</a>
              </span>
            ))}
          </p>
        )}
        {error && <p className="error">{error}</p>}
      </section>

      <div className="grid">
        <section className="card answer">
          <h3>Answer</h3>
          {view.text ? <Markdown text={view.text} /> : <p className="muted">{live ? 'Waiting for the model…' : 'No text.'}</p>}
          {view.reasoning && (
            <details className="reasoning">
              <summary>reasoning</summary>
              <pre>{view.reasoning}</pre>
            </details>
          )}
          {view.error && <DiagnosisBox diagnosis={view.error.diagnosis} fallback={view.error.message} alert />}
        </section>
        <section className="card wide">
          <h3>Trace</h3>
          <Waterfall trace={trace?.view ?? null} fetchedAt={trace?.at ?? 0} onOpenStep={(index) => setFocus((f) => ({ index, n: (f?.n ?? 0) + 1 }))} />
        </section>
        <section className="card">
          <h3>Plan</h3>
          <TodoList todos={todos} />
        </section>
        <section className="card">
          <h3>Steps</h3>
          <Steps steps={view.steps} focus={focus} runId={runId} />
        </section>
        <section className="card">
          <h3>Process</h3>
          <ProcessTimeline operations={view.operations} order={view.operationOrder} ended={view.ended !== null || !live} />
        </section>
        <section className="card">
          <h3>Artifacts</h3>
          <Artifacts runId={runId} docs={status?.public_documents ?? []} />
        </section>
        <WebhooksCard runId={runId} ended={!live} />
        <section className="card">
          <h3>Metrics</h3>
          {metrics ? (
            <MetricsPanel metrics={metrics} />
          ) : (
            <p className="muted">{live ? 'When the run ends.' : 'None.'}</p>
          )}
          <p className="muted small">{view.frames} frames received</p>
        </section>
      </div>
    </div>
  );
}
