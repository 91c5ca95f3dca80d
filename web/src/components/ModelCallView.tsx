import { useEffect, useRef, useState } from 'react';
import { api, withToken } from '../api.js';
import { folded, partText, reasoningSetting, requestDiff, turnOfSpan, type Message, type ModelCall, type ModelCallsPage, type Part } from '../model-call.js';
import { formatMs, tokensText } from '../trace-view.js';
import { formatUsd } from '../usage-summary.js';
import { LongList } from './LongList.js';

/**
 * One model call as the model saw it: the figures, the settings, the system prompt (folded), every
 * message in order with its tool calls and results — those the turn added marked, those a
 * compaction took out listed — and the response.
 */
export function ModelCallView({ runId, spanId, onClose }: { runId: string; spanId: string; onClose(): void }) {
  const [state, setState] = useState<{ call: ModelCall | null; previous: ModelCall | null; capture: string; tools: string[] } | null>(null);
  const [error, setError] = useState('');
  const ref = useRef<HTMLDivElement>(null);
  // opened from the steps further down: bring it into view
  useEffect(() => {
    ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [spanId]);

  useEffect(() => {
    let stop = false;
    setState(null);
    setError('');
    const base = `/api/runs/${encodeURIComponent(runId)}/model-calls`;
    const t = turnOfSpan(spanId);
    const query = t ? `turn=${t.turn}&limit=200` : `limit=200`;
    const load = async (): Promise<void> => {
      const page = await api<ModelCallsPage>(`${base}?${query}`);
      const call = page.calls.find((c) => c.span_id === spanId) ?? null;
      const previous = call?.previous_call ? ((await api<ModelCallsPage>(`${base}?call=${call.previous_call}`)).calls[0] ?? null) : null;
      const tools = call?.request.tools ? (page.tool_sets[call.request.tools.set] ?? []).map((x) => x.name) : [];
      if (!stop) setState({ call, previous, capture: page.capture, tools });
    };
    load().catch((e: Error) => !stop && setError(e.message));
    return () => {
      stop = true;
    };
  }, [runId, spanId]);

  const head = (
    <div className="call-head">
      <strong>Model call</strong> <span className="muted">{spanId}</span>
      <button className="link" onClick={onClose}>
        close
      </button>
    </div>
  );
  if (error)
    return (
      <div className="call-view" ref={ref}>
        {head}
        <p className="error">{error}</p>
      </div>
    );
  if (!state)
    return (
      <div className="call-view" ref={ref}>
        {head}
        <p className="muted">Loading the call…</p>
      </div>
    );
  if (!state.call) {
    return (
      <div className="call-view" data-testid="call-view" ref={ref}>
        {head}
        <p className="muted" data-testid="call-missing">
          {state.capture === 'off'
            ? 'This run did not record its model calls: capture.model_io was false (in config.json or the agent).'
            : 'No record of this call (it is still running, or the run is older than the model-call record).'}
        </p>
      </div>
    );
  }
  const c = state.call;
  const diff = state.previous ? requestDiff(state.previous.request.messages, c.request.messages) : null;
  const s = c.request.settings;
  const figures: Array<[string, string]> = [
    ['Call', `${c.call}${c.turn !== null ? ` · turn ${c.turn}${c.attempt ? ` (retry ${c.attempt})` : ''}` : ` · ${c.kind}`}`],
    ['Model', `${c.provider}:${c.model}`],
    ['Latency', formatMs(c.latency_ms)],
    ['First token', c.first_token_ms === null ? '–' : formatMs(c.first_token_ms)],
    ['Tokens', c.usage ? tokensText(c.usage) : 'not reported'],
    ['Cost', c.cost_usd === null ? 'unknown' : formatUsd(c.cost_usd)],
    ['Finish', c.response.finish_reason],
    [
      'Settings',
      [
        s.max_output_tokens !== null ? `max output ${s.max_output_tokens}` : '',
        s.temperature !== null ? `temperature ${s.temperature}` : '',
        reasoningSetting(c),
        s.cache_breakpoints.length ? `cache at ${s.cache_breakpoints.join(', ')}` : '',
      ]
        .filter(Boolean)
        .join(' · '),
    ],
  ];
  return (
    <div className="call-view" data-testid="call-view" ref={ref}>
      {head}
      <dl className="call-figs">
        {figures.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {c.cut && (
        <p className="diagnosis small" data-testid="call-cut">
          Shortened to {Math.round(c.cut.limit_bytes / 1024)} KB:{' '}
          {c.cut.fields.map((f) => `${f.path} (kept ${f.kept_chars} of ${f.original_chars} characters)`).join('; ')}
        </p>
      )}
      <details className="call-system">
        <summary>System prompt ({c.request.system.length.toLocaleString('en-US')} characters)</summary>
        <pre>{c.request.system}</pre>
      </details>
      {state.tools.length > 0 && (
        <details>
          <summary>Tools ({state.tools.length})</summary>
          <p className="small">{state.tools.join(', ')}</p>
        </details>
      )}
      {diff && (
        <p className="call-diff small" data-testid="call-diff">
          Since call {state.previous!.call}: <strong>+{diff.added.to - diff.added.from}</strong> message(s) added
          {diff.removed.length > 0 && (
            <>
              , <strong>−{diff.removed.length}</strong> taken out
            </>
          )}
          {diff.head > 0 && <> · the first {diff.head} unchanged</>}
        </p>
      )}
      {diff && diff.removed.length > 0 && (
        <details className="call-removed" data-testid="call-removed">
          <summary>
            Taken out since call {state.previous!.call} ({diff.removed.length})
          </summary>
          <ol className="call-messages">
            {diff.removed.map((m, i) => (
              <MessageItem key={i} runId={runId} m={m} mark="removed" />
            ))}
          </ol>
        </details>
      )}
      <h4>Request: {c.request.messages.length} message(s)</h4>
      <LongList count={c.request.messages.length} rowHeight={48} className="call-messages" label="messages" testId="call-messages">
        {(i, measure) => (
          <MessageItem
            key={i}
            runId={runId}
            m={c.request.messages[i]}
            mark={diff && i >= diff.added.from && i < diff.added.to ? 'added' : diff ? 'kept' : 'none'}
            row={i}
            measure={measure}
          />
        )}
      </LongList>
      <h4>Response</h4>
      <div className="call-response" data-testid="call-response">
        {c.response.error && (
          <p className="error">
            {c.response.error.code}: {c.response.error.summary}
          </p>
        )}
        {c.response.reasoning && (
          <details data-testid="call-reasoning">
            <summary>thinking ({c.response.reasoning.length.toLocaleString('en-US')} characters)</summary>
            <pre>{c.response.reasoning}</pre>
          </details>
        )}
        {c.response.text && <pre className="call-text">{c.response.text}</pre>}
        {c.response.tool_calls.map((t, i) => (
          <div key={i} className="call-tool">
            → <strong>{t.name}</strong> {t.id && <span className="muted small">{t.id}</span>}
            <pre>{JSON.stringify(t.arguments, null, 2)}</pre>
          </div>
        ))}
        {!c.response.text && !c.response.tool_calls.length && !c.response.error && <p className="muted">No text and no tool calls.</p>}
      </div>
    </div>
  );
}

function PartView({ runId, p }: { runId: string; p: Part }) {
  switch (p.type) {
    case 'text':
      return <pre className="call-text">{p.content}</pre>;
    case 'reasoning':
      return (
        <details>
          <summary>thinking{p.redacted ? ' (redacted)' : ''}</summary>
          <pre>{p.content}</pre>
        </details>
      );
    case 'tool_call':
      return (
        <div className="call-tool">
          → <strong>{p.name}</strong> <span className="muted small">{p.id}</span>
          <pre>{partText(p)}</pre>
        </div>
      );
    case 'tool_call_response': {
      const text = partText(p);
      const fold = folded(text);
      return (
        <div className={`call-result${p.is_error ? ' failed' : ''}`} data-testid="call-result">
          {p.is_error ? '✗' : '←'} <strong>{p.name}</strong> <span className="muted small">{p.id}</span>
          {fold ? (
            <details className="call-fold">
              <summary>
                <pre>{fold.head}</pre>
                <span className="muted small">… {fold.more} (open to show all)</span>
              </summary>
              <pre>{text}</pre>
            </details>
          ) : (
            <pre>{text}</pre>
          )}
        </div>
      );
    }
    case 'file': {
      const name = p.file_id.split('/').pop() ?? '';
      const url = withToken(`/api/runs/${encodeURIComponent(runId)}/model-calls/files/${encodeURIComponent(name)}`);
      return p.modality === 'image' ? (
        <a href={url} target="_blank" rel="noreferrer" className="call-image">
          <img src={url} alt={p.label ?? name} />
          <span className="muted small">{partText(p)}</span>
        </a>
      ) : (
        <a href={url}>{partText(p)}</a>
      );
    }
    default:
      return <p className="muted small">{partText(p)}</p>;
  }
}

function MessageItem({
  runId,
  m,
  mark,
  row,
  measure,
}: {
  runId: string;
  m: Message;
  mark: 'added' | 'kept' | 'removed' | 'none';
  row?: number;
  measure?: (el: HTMLLIElement | null) => void;
}) {
  return (
    <li className={`call-msg role-${m.role} mark-${mark}`} data-index={row} ref={measure}>
      <span className="call-role">
        {m.role}
        {mark === 'added' && <span className="badge added">new</span>}
        {m.cache && <span className="badge">cache</span>}
      </span>
      <div className="call-parts">
        {m.parts.map((p, i) => (
          <PartView key={i} runId={runId} p={p} />
        ))}
      </div>
    </li>
  );
}
