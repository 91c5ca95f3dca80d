import { memo, useCallback, useEffect, useMemo, useState } from 'react';
import type { StepView } from '../run-state.js';
import { durationOf, timeline } from '../timeline.js';
import { formatMs, tokensText, type RunTraceView, type TraceBar, type TraceMessage } from '../trace-view.js';
import { useRunView } from '../use-run-view.js';
import { ApprovalControls } from './ApprovalControls.js';
import { DiagnosisBox } from './DiagnosisBox.js';
import { LongList } from './LongList.js';
import { ProcessTimeline } from './ProcessTimeline.js';

/** Where a row sits in its list, and how the list measures it (see LongList). */
interface Row {
  row: number;
  measure?: (el: HTMLLIElement | null) => void;
}

// Plain glyphs (coloured by CSS): emoji fonts are not a given on a self-hosted box.
const ICON: Record<string, string> = { start: '◌', ok: '✓', fail: '✗' };

/** A step asked to be shown from elsewhere (the waterfall): `n` counts the asks, so the same step can be asked again. */
export interface StepFocus {
  index: number;
  n: number;
}

/** A subagent's own steps and timeline, inside its parent's `agent` step, followed live. */
function ChildRun({ runId }: { runId: string }) {
  const { view } = useRunView(runId);
  return (
    <div className="child-run" data-testid="child-run">
      <p className="small">
        Subagent run <a href={`#/runs/${encodeURIComponent(runId)}`}>{runId}</a>
        {view.ended ? ` · ${view.ended === 'done' ? 'completed' : 'ended with an error'}` : ' · running'}
      </p>
      <Steps steps={view.steps} runId={runId} />
      {view.operationOrder.length > 0 && <ProcessTimeline operations={view.operations} order={view.operationOrder} ended={view.ended !== null} />}
    </div>
  );
}

function Duration({ bar, nowMs }: { bar: TraceBar | null; nowMs: number }) {
  const d = durationOf(bar, nowMs);
  if (!d) return null;
  return <span className="dur muted small">{d.running ? `${formatMs(d.ms)}…` : formatMs(d.ms)}</span>;
}

/** A model turn in the timeline: a click opens the call (what the model was sent and answered). */
const ModelTurn = memo(function ModelTurn({
  bar,
  nowMs,
  selected,
  onOpen,
  row,
  measure,
}: { bar: TraceBar; nowMs: number; selected: boolean; onOpen(spanId: string): void } & Row) {
  const tokens = bar.tokens ? `${(bar.tokens.input + bar.tokens.output).toLocaleString('en-US')} tok` : '';
  return (
    <li className={`step turn wf-${bar.status}${selected ? ' focused' : ''}`} data-turn={bar.id} data-index={row} ref={measure}>
      <button className="step-head" onClick={() => onOpen(bar.id)} aria-pressed={selected} title={tokensText(bar.tokens)}>
        <span className="icon" role="img" aria-label={bar.status === 'running' ? 'start' : bar.status === 'error' ? 'fail' : 'ok'}>
          {bar.status === 'running' ? ICON.start : bar.status === 'error' ? ICON.fail : '◆'}
        </span>
        <span className="kind">model</span>
        <span className="name">
          turn {bar.turn}
          {bar.attempt ? ` (retry ${bar.attempt})` : ''}
          {bar.finish_reason ? <span className="muted small"> · {bar.finish_reason}</span> : null}
        </span>
        {tokens && <span className="muted small">{tokens}</span>}
        <Duration bar={bar} nowMs={nowMs} />
      </button>
    </li>
  );
});

function MessageLine({ m, row, measure }: { m: TraceMessage } & Row) {
  return (
    <li className="step message" data-message={m.id} data-index={row} ref={measure}>
      <div className="step-head">
        <span className="icon" role="img" aria-label="message">
          ✉
        </span>
        <span className="kind">{m.mode === 'steer' ? 'steer' : 'follow-up'}</span>
        <span className="name">{m.text}</span>
        <span className="muted small">
          {m.delivered_ms === null ? 'waiting for the model' : `read by the model at ${formatMs(m.delivered_ms)}`} · {m.from}
        </span>
      </div>
    </li>
  );
}

// memo: a long run's old steps do not re-render when a new one arrives
const Step = memo(function Step({
  s,
  focused,
  open,
  setOpen,
  runId,
  bar,
  nowMs,
  row,
  measure,
}: { s: StepView; focused: boolean; open: boolean; setOpen(index: number, open: boolean): void; runId: string; bar?: TraceBar | null; nowMs?: number } & Row) {
  const waiting = s.approval?.status === 'pending';
  // a call that starts waiting for a person opens itself: the buttons must be seen
  useEffect(() => {
    if (waiting) setOpen(s.index, true);
  }, [waiting, s.index, setOpen]);
  const title = s.name || s.type;
  const child = s.node?.type === 'run' ? s.node.id : null;
  const hasMore = Boolean(s.diagnosis || s.result || s.args || s.text || s.approval || child);
  return (
    <li className={`step phase-${s.phase || 'none'}${focused ? ' focused' : ''}`} data-step-index={s.index} data-index={row} ref={measure}>
      <button className="step-head" onClick={() => setOpen(s.index, !open)} disabled={!hasMore} aria-expanded={open}>
        <span className="icon" role="img" aria-label={s.phase || 'step'}>
          {ICON[s.phase] ?? '•'}
        </span>
        <span className="kind">{s.type}</span>
        <span className="name">{child ? `${s.node!.label || title}` : title}</span>
        {waiting && <span className="badge sev-warning">awaiting approval</span>}
        {s.diagnosis && <span className={`badge sev-${s.diagnosis.severity}`}>{s.diagnosis.code}</span>}
        <Duration bar={bar ?? null} nowMs={nowMs ?? 0} />
      </button>
      {open && (
        <div className="step-body">
          {s.approval && <ApprovalControls runId={runId} approval={s.approval} />}
          {s.diagnosis && <DiagnosisBox diagnosis={s.diagnosis} />}
          {s.text && <p>{s.text}</p>}
          {s.args !== undefined && s.args !== null && (
            <details>
              <summary>args</summary>
              <pre>{JSON.stringify(s.args, null, 2)}</pre>
            </details>
          )}
          {child && <ChildRun runId={child} />}
          {s.result && (
            <details open={s.phase === 'fail'}>
              <summary>result</summary>
              <pre>{s.result.length > 4000 ? `${s.result.slice(0, 4000)}…` : s.result}</pre>
            </details>
          )}
        </div>
      )}
    </li>
  );
});

/**
 * The run's steps in order; with its trace, the model turns (a click opens the call) and people's
 * messages between them, each step with how long it took.
 */
// memo: a run's frames re-render its page many times a second; a long run's steps only when they change
export const Steps = memo(function Steps({
  steps,
  focus,
  runId,
  trace,
  nowMs = 0,
  selectedCall,
  onOpenCall,
}: {
  steps: StepView[];
  focus?: StepFocus | null;
  runId: string;
  trace?: RunTraceView | null;
  nowMs?: number;
  selectedCall?: string | null;
  onOpenCall?(spanId: string): void;
}) {
  // model turns are rows only where they open something
  const entries = useMemo(() => timeline(steps, trace ?? null).filter((e) => e.kind !== 'model' || onOpenCall), [steps, trace, onOpenCall]);
  // which steps are open is kept here, not in each step: a long list draws only the rows in view, and a
  // step scrolled away and back is still as it was left
  const [opened, setOpened] = useState<ReadonlySet<number>>(() => new Set());
  const setOpen = useCallback((index: number, open: boolean): void => {
    setOpened((o) => {
      if (o.has(index) === open) return o;
      const next = new Set(o);
      if (open) next.add(index);
      else next.delete(index);
      return next;
    });
  }, []);
  // a step asked for from the waterfall opens, and the list brings it into view
  useEffect(() => {
    if (focus) setOpen(focus.index, true);
  }, [focus, setOpen]);
  const reveal = useMemo(() => {
    const at = focus ? entries.findIndex((e) => e.kind === 'step' && e.step.index === focus.index) : -1;
    return focus && at >= 0 ? { index: at, n: focus.n } : null;
  }, [focus, entries]);
  if (!entries.length) return <p className="muted">No steps yet.</p>;
  return (
    <LongList count={entries.length} rowHeight={31} className="steps" label="steps" reveal={reveal}>
      {(i, measure) => {
        const e = entries[i];
        return e.kind === 'step' ? (
          <Step
            key={`s${e.step.index}`}
            s={e.step}
            focused={focus?.index === e.step.index}
            open={opened.has(e.step.index)}
            setOpen={setOpen}
            runId={runId}
            bar={e.bar}
            nowMs={nowMs}
            row={i}
            measure={measure}
          />
        ) : e.kind === 'model' ? (
          onOpenCall ? (
            <ModelTurn key={e.bar.id} bar={e.bar} nowMs={nowMs} selected={selectedCall === e.bar.id} onOpen={onOpenCall} row={i} measure={measure} />
          ) : null
        ) : (
          <MessageLine key={e.message.id} m={e.message} row={i} measure={measure} />
        );
      }}
    </LongList>
  );
});
