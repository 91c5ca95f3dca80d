import { metricsFigures } from '../metrics-figures.js';
import { formatMs } from '../trace-view.js';
import { UsageSummary } from './UsageSummary.js';

/** A finished run's metrics.json as figures: headline, time by stage, tokens, tool calls by name, model latency. */
export function MetricsPanel({ metrics }: { metrics: unknown }) {
  const f = metricsFigures(metrics);
  if (!f) return <p className="muted">No metrics.</p>;
  return (
    <div className="metrics" data-testid="metrics">
      <dl className="usage headline">
        {f.headline.map((h) => (
          <div key={h.label}>
            <dt>{h.label}</dt>
            <dd>{h.value}</dd>
          </div>
        ))}
      </dl>

      {f.stages.length > 0 && (
        <>
          <h4>Time by stage</h4>
          <div className="stage-bar" aria-hidden="true">
            {f.stages.map((s) => (
              <span key={s.stage} className={`stage stage-${s.stage}`} style={{ width: `${s.pct}%` }} />
            ))}
          </div>
          <ul className="stage-list">
            {f.stages.map((s) => (
              <li key={s.stage}>
                <span className={`swatch stage-${s.stage}`} aria-hidden="true" />
                <span className="stage-name">{s.label}</span>
                <span className="stage-ms">{formatMs(s.ms)}</span>
                <span className="stage-pct">{Math.round(s.pct)}%</span>
              </li>
            ))}
          </ul>
        </>
      )}

      <h4>Tokens</h4>
      <UsageSummary metrics={metrics} />

      {f.tools.length > 0 && (
        <>
          <h4>Tool calls by name</h4>
          <table className="tool-table">
            <thead>
              <tr>
                <th>Tool</th>
                <th>Calls</th>
                <th>Time</th>
              </tr>
            </thead>
            <tbody>
              {f.tools.map((t) => (
                <tr key={t.name}>
                  <td className="tool-name">{t.name}</td>
                  <td>{t.calls}</td>
                  <td>{formatMs(t.ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      {f.latency.length > 0 && (
        <>
          <h4>Model latency</h4>
          <dl className="usage">
            {f.latency.map((h) => (
              <div key={h.label}>
                <dt>{h.label}</dt>
                <dd>{h.value}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </div>
  );
}
