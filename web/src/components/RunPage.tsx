import { useCallback, useEffect, useReducer, useState } from 'react';
import { api, ApiError, TERMINAL, type RunStatus } from '../api.js';
import { applyFrames, emptyRunView, type RunView } from '../run-state.js';
import { frameBatches } from '../frame-batches.js';
import { followRun, type WireFrame } from '../run-stream.js';
import { Artifacts } from './Artifacts.js';
import { Conversation } from './Conversation.js';
import { Markdown } from './Markdown.js';
import { MessageBox } from './MessageBox.js';
import { ModelCallView } from './ModelCallView.js';
import { ProcessTimeline } from './ProcessTimeline.js';
import { Steps, type StepFocus } from './Steps.js';
import { TodoList, todosOf, type Todo } from './TodoList.js';
import { DiagnosisBox } from './DiagnosisBox.js';
import { MetricsPanel } from './MetricsPanel.js';
import { Waterfall } from './Waterfall.js';
import { WebhooksCard } from './WebhooksCard.js';
import type { RunTraceView } from '../trace-view.js';
import { noAnswerText } from '../no-answer-text.js';

type Action = { frames: WireFrame[] } | { reset: true };

function reducer(s: RunView, a: Action): RunView {
  return 'reset' in a ? emptyRunView() : applyFrames(s, a.frames);
}

/** The stream's state in words, only while there is something to say (a finished run's stream simply ends). */
const CONN_LABEL: Record<string, { text: string; title: string } | undefined> = {
  connecting: { text: 'connecting…', title: "opening the run's event stream" },
  live: { text: 'live', title: 'events arrive as the run makes them' },
  reconnecting: { text: 'reconnecting…', title: 'the stream dropped; it resumes from the last event received, without a gap' },
};

export function RunPage({ runId }: { runId: string }) {
  const [view, dispatch] = useReducer(reducer, undefined, emptyRunView);
  const [conn, setConn] = useState('connecting');
  const [status, setStatus] = useState<RunStatus | null>(null);
  const [todos, setTodos] = useState<Todo[]>([]);
  const [metrics, setMetrics] = useState<unknown>(null);
  const [trace, setTrace] = useState<{ view: RunTraceView; at: number } | null>(null);
  const [focus, setFocus] = useState<StepFocus | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [poke, setPoke] = useState(0);
  const [now, setNow] = useState(() => Date.now());
  const [error, setError] = useState('');
  const [notFound, setNotFound] = useState(false);

  useEffect(() => {
    dispatch({ reset: true });
    setNotFound(false);
    setTrace(null);
    setFocus(null);
    setSelected(null);
    return followRun(runId, { onFrame: frameBatches((frames) => dispatch({ frames })), onState: setConn });
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
        setError('');
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
  }, [runId, view.ended, poke]);

  const finished = (status !== null && TERMINAL.has(status.status)) || view.ended !== null;
  // running steps and turns show their time so far
  useEffect(() => {
    if (finished) return;
    const t = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(t);
  }, [finished]);

  const openCall = useCallback((spanId: string): void => setSelected((s) => (s === spanId ? null : spanId)), []);
  const selectBar = useCallback((bar: { id: string } | null): void => setSelected(bar ? bar.id : null), []);
  const openStep = useCallback((index: number): void => setFocus((f) => ({ index, n: (f?.n ?? 0) + 1 })), []);

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

  // the terminal frame is the word: a run whose answer is in is not shown as still working
  const shown =
    status && TERMINAL.has(status.status)
      ? status.status
      : view.ended === 'done'
        ? 'completed'
        : view.ended === 'error'
          ? view.error?.diagnosis?.code === 'cancelled'
            ? 'cancelled'
            : 'failed'
          : (status?.status ?? 'queued');
  const label = finished ? undefined : CONN_LABEL[conn];
  // a finished run's time stands still (its steps need not re-render with the clock)
  const nowMs = trace ? trace.view.last_ms + (finished ? 0 : Math.max(0, now - trace.at)) : 0;
  const selectedBar = trace?.view.bars.find((b) => b.id === selected) ?? null;
  return (
    <div className="run-page">
      <section className="card">
        <div className="row">
          <h2 className="run-id">{runId}</h2>
          <span className={`pill st-${shown}`} data-testid="run-status">
            {shown}
          </span>
          {label && (
            <span className={`conn conn-${conn}`} title={label.title} data-testid="stream-state">
              {label.text}
            </span>
          )}
          {!finished && (
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
        {!finished && <MessageBox runId={runId} onSent={() => setPoke((n) => n + 1)} />}
      </section>

      {status && status.conversation_id !== runId && <Conversation runId={runId} conversationId={status.conversation_id} refreshKey={`${shown}`} />}

      <section className="card answer">
        <h3>Answer</h3>
        {view.text ? <Markdown text={view.text} /> : <p className="muted">{noAnswerText(finished, shown)}</p>}
        {view.reasoning.length > 0 && (
          <details className="reasoning">
            <summary>
              reasoning ({view.reasoning.length} turn{view.reasoning.length > 1 ? 's' : ''})
            </summary>
            <ol className="reasoning-turns">
              {view.reasoning.map((r, i) => (
                <li key={i}>
                  <pre>{r}</pre>
                </li>
              ))}
            </ol>
          </details>
        )}
        {view.error && <DiagnosisBox diagnosis={view.error.diagnosis} fallback={view.error.message} alert />}
      </section>
      <section className="card">
        <h3>Trace</h3>
        <Waterfall trace={trace?.view ?? null} fetchedAt={trace?.at ?? 0} selected={selected} onSelect={selectBar} onOpenStep={openStep} />
        {selectedBar?.kind === 'model' && <ModelCallView runId={runId} spanId={selectedBar.id} onClose={() => setSelected(null)} />}
      </section>

      <div className="columns">
        <div className="column">
          <section className="card">
            <h3>Steps</h3>
            <Steps steps={view.steps} focus={focus} runId={runId} trace={trace?.view ?? null} nowMs={nowMs} selectedCall={selected} onOpenCall={openCall} />
          </section>
          <section className="card">
            <h3>Process</h3>
            <ProcessTimeline operations={view.operations} order={view.operationOrder} ended={finished} />
          </section>
        </div>
        <div className="column">
          <section className="card">
            <h3>Plan</h3>
            <TodoList todos={todos} />
          </section>
          <section className="card">
            <h3>Artifacts</h3>
            <Artifacts runId={runId} docs={status?.public_documents ?? []} />
          </section>
          <WebhooksCard runId={runId} ended={finished} />
          <section className="card">
            <h3>Metrics</h3>
            {metrics ? <MetricsPanel metrics={metrics} /> : <p className="muted">{finished ? 'None.' : 'When the run ends.'}</p>}
            <p className="muted small">{view.frames} frames received</p>
          </section>
        </div>
      </div>
    </div>
  );
}
