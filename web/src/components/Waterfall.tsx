import { memo, useEffect, useState } from 'react';
import { axisTicks, barSummary, formatMs, KIND_LABEL, placeBars, tokensText, type PlacedBar, type RunTraceView, type TraceBar } from '../trace-view.js';
import { formatUsd } from '../usage-summary.js';
import { LongList } from './LongList.js';

/**
 * The run as a waterfall: the run, each model call, tool call, MCP call, subagent and compaction as a
 * bar on one time axis, with its duration and tokens. A click selects the bar: its figures show, a tool
 * bar opens its step, a model bar the call (what the model was sent and answered).
 */
// memo: it changes when the trace is polled, not with each frame of the run's stream
export const Waterfall = memo(function Waterfall({
  trace,
  fetchedAt,
  selected,
  onSelect,
  onOpenStep,
}: {
  trace: RunTraceView | null;
  fetchedAt: number;
  selected: string | null;
  onSelect(bar: TraceBar | null): void;
  onOpenStep(index: number): void;
}) {
  const [now, setNow] = useState(() => Date.now());
  const live = trace !== null && !trace.ended;
  // open bars grow between polls
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [live]);

  if (!trace || trace.bars.length === 0) return <p className="muted">No spans yet.</p>;
  const { totalMs, bars } = placeBars(trace, trace.last_ms + Math.max(0, now - fetchedAt));
  const ticks = axisTicks(totalMs);
  // the grid lines of every row as one background (ticks are evenly spaced): a run of thousands of calls
  // draws one element per row for them, not one per tick
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : totalMs;
  const grid = { backgroundImage: 'linear-gradient(to right, var(--line) 1px, transparent 1px)', backgroundSize: `${(100 * step) / totalMs}% 100%` };
  const chosen = bars.find((p) => p.bar.id === selected) ?? null;

  const pick = (p: PlacedBar): void => {
    onSelect(p.bar.id === selected ? null : p.bar);
    if (p.bar.step_index !== null) onOpenStep(p.bar.step_index);
  };

  return (
    <div className="waterfall" data-testid="waterfall">
      <div className="wf-axis" aria-hidden="true">
        <span className="wf-label" />
        <span className="wf-track">
          {ticks.map((t) => (
            <span key={t} className="wf-tick" style={{ left: `${(100 * t) / totalMs}%` }}>
              {t === 0 ? '0' : formatMs(t)}
            </span>
          ))}
        </span>
        <span className="wf-figs" />
      </div>
      <LongList count={bars.length} rowHeight={23} className="wf-rows" label="spans">
        {(i, measure) => {
          const p = bars[i];
          const b = p.bar;
          const tokens = tokensText(b.tokens);
          return (
            <li key={b.id} data-index={i} ref={measure}>
              <button
                className={`wf-row kind-${b.kind} wf-${b.status}${b.id === selected ? ' selected' : ''}`}
                onClick={() => pick(p)}
                aria-pressed={b.id === selected}
                aria-label={barSummary(p)}
                title={barSummary(p)}
                data-bar={b.id}
              >
                <span className="wf-label">
                  <span className="wf-kind">{KIND_LABEL[b.kind] ?? b.kind}</span> <span className="wf-name">{b.label}</span>
                </span>
                <span className="wf-track" style={grid}>
                  <span className={`wf-bar${p.running ? ' running' : ''}`} style={{ left: `${p.left}%`, width: `${p.width}%` }} />
                </span>
                <span className="wf-figs">
                  <span className="wf-dur">{p.running ? `${formatMs(p.ms)}…` : formatMs(p.ms)}</span>
                  {tokens && <span className="wf-tok">{b.tokens ? `${(b.tokens.input + b.tokens.output).toLocaleString('en-US')} tok` : ''}</span>}
                </span>
              </button>
            </li>
          );
        }}
      </LongList>
      {chosen && <BarDetail p={chosen} onOpenStep={onOpenStep} />}
    </div>
  );
});

function BarDetail({ p, onOpenStep }: { p: PlacedBar; onOpenStep(index: number): void }) {
  const b = p.bar;
  const rows: Array<[string, string]> = [
    ['Span', b.name],
    ['Starts at', formatMs(b.start_ms)],
    ['Duration', p.running ? `${formatMs(p.ms)} so far` : formatMs(p.ms)],
  ];
  if (b.kind === 'model') {
    if (b.turn !== undefined) rows.push(['Turn', b.attempt ? `${b.turn} (retry ${b.attempt})` : String(b.turn)]);
    if (b.first_token_ms !== undefined && b.first_token_ms !== null) rows.push(['First token', formatMs(b.first_token_ms)]);
    if (b.finish_reason) rows.push(['Finish', b.finish_reason]);
    rows.push(['Tokens', b.tokens ? tokensText(b.tokens) : p.running ? '…' : 'not reported']);
    if (b.cost_usd !== null) rows.push(['Cost', formatUsd(b.cost_usd)]);
  }
  if (b.status === 'error') rows.push(['Failed', b.error ?? 'yes']);
  if (b.status === 'cancelled') rows.push(['Cut off', b.error ?? 'the run ended first']);
  return (
    <div className="wf-detail" data-testid="waterfall-detail">
      <dl>
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {b.step_index !== null && (
        <button className="link" onClick={() => onOpenStep(b.step_index as number)}>
          show step {b.step_index + 1}
        </button>
      )}
    </div>
  );
}
