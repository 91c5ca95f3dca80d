import { useEffect, useState } from 'react';
import { api, apiText, type RunStatus } from '../api.js';
import { artifactDiffs, foldSame, metricsRows, settingsRows, type ArtifactDiff, type CompareRow } from '../compare.js';
import { useRunView } from '../use-run-view.js';
import type { ModelCallsPage } from '../model-call.js';

const SYSTEM_PROMPT = '(system prompt)';
import type { StepView } from '../run-state.js';

interface Side {
  status: RunStatus;
  config: unknown;
  metrics: unknown;
  artifacts: Record<string, string>;
}

async function loadSide(id: string): Promise<Side> {
  const base = `/api/runs/${encodeURIComponent(id)}`;
  const [status, config, metrics, first] = await Promise.all([
    api<RunStatus>(base),
    api<{ config: unknown }>(`${base}/config`),
    api<{ metrics: unknown }>(`${base}/metrics`),
    api<ModelCallsPage>(`${base}/model-calls?call=1`).catch(() => null),
  ]);
  const artifacts: Record<string, string> = {};
  // the system prompt the model got (from the first recorded call): what a prompt change changed
  const system = first?.calls[0]?.request.system;
  if (system !== undefined) artifacts[SYSTEM_PROMPT] = system;
  await Promise.all(
    status.public_documents.map(async (d) => {
      const rel = d.path.replace(/^artifacts\//, '');
      artifacts[d.path] = await apiText(`${base}/artifacts/${rel.split('/').map(encodeURIComponent).join('/')}`).catch(
        (e: Error) => `(could not read: ${e.message})`,
      );
    }),
  );
  return { status, config: config.config, metrics: metrics.metrics, artifacts };
}

function Rows({ rows, testId }: { rows: CompareRow[]; testId: string }) {
  return (
    <table className="compare-table" data-testid={testId}>
      <tbody>
        {rows.map((r) => (
          <tr key={r.label} className={r.differs ? 'differs' : ''}>
            <th>{r.label}</th>
            <td>{r.a}</td>
            <td>{r.b}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function StepList({ steps }: { steps: StepView[] }) {
  if (!steps.length) return <p className="muted">No steps.</p>;
  return (
    <ol className="compare-steps">
      {steps.map((s) => (
        <li key={s.index} className={`phase-${s.phase}`}>
          <span className="kind small muted">{s.type}</span> {s.name} <span className="small muted">{s.phase}</span>
        </li>
      ))}
    </ol>
  );
}

function ArtifactBlock({ d }: { d: ArtifactDiff }) {
  const label = { same: 'the same in both', differs: `+${d.added} −${d.removed} lines`, 'only-a': 'only in the first run', 'only-b': 'only in the second run' }[
    d.state
  ];
  return (
    <details className={`artifact-diff state-${d.state}`} open={d.state === 'differs' && d.lines.length <= 400} data-artifact-diff={d.path}>
      <summary>
        <strong>{d.path}</strong> <span className="muted small">{label}</span>
      </summary>
      {d.state !== 'same' && (
        <pre className="diff">
          {foldSame(d.lines).map((l, i) =>
            l.kind === 'fold' ? (
              <span key={i} className="fold">
                {`… ${l.count} unchanged line(s)`}
              </span>
            ) : (
              <span key={i} className={l.kind}>
                {`${l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}${l.text}`}
              </span>
            ),
          )}
        </pre>
      )}
    </details>
  );
}

/** `#/compare/<a>/<b>`: two runs side by side — settings, figures, steps and each artifact's difference. */
export function ComparePage({ a, b }: { a: string; b: string }) {
  const [sides, setSides] = useState<[Side, Side] | null>(null);
  const [error, setError] = useState('');
  const va = useRunView(a).view;
  const vb = useRunView(b).view;
  useEffect(() => {
    let stop = false;
    setSides(null);
    Promise.all([loadSide(a), loadSide(b)])
      .then((s) => !stop && setSides(s))
      .catch((e: Error) => !stop && setError(e.message));
    return () => {
      stop = true;
    };
  }, [a, b]);
  const link = (id: string) => <a href={`#/runs/${encodeURIComponent(id)}`}>{id}</a>;
  return (
    <div className="compare-page" data-testid="compare">
      <section className="card">
        <h2>
          Compare {link(a)} with {link(b)}
        </h2>
        <p className="muted small">Rows that differ are marked; artifacts show what changed from the first run to the second (− first, + second).</p>
        {error && <p className="error">{error}</p>}
        {!sides && !error && <p className="muted">Loading both runs…</p>}
      </section>
      {sides && (
        <>
          <section className="card">
            <h3>Settings</h3>
            <Rows rows={settingsRows(sides[0], sides[1])} testId="compare-settings" />
          </section>
          <section className="card">
            <h3>Figures</h3>
            <Rows rows={metricsRows(sides[0], sides[1])} testId="compare-metrics" />
          </section>
          <section className="card">
            <h3>Steps</h3>
            <div className="columns">
              <div className="column">
                <StepList steps={va.steps} />
              </div>
              <div className="column">
                <StepList steps={vb.steps} />
              </div>
            </div>
          </section>
          <section className="card">
            <h3>Artifacts</h3>
            {artifactDiffs(sides[0].artifacts, sides[1].artifacts).map((d) => (
              <ArtifactBlock key={d.path} d={d} />
            ))}
            {!sides[0].status.public_documents.length && !sides[1].status.public_documents.length && <p className="muted">Neither run wrote artifacts.</p>}
          </section>
        </>
      )}
    </div>
  );
}
