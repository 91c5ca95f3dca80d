import { usageRows } from '../usage-summary.js';

/** Tokens (with the share read from the prompt cache) and the cost of a finished run. */
export function UsageSummary({ metrics }: { metrics: unknown }) {
  const rows = usageRows(metrics);
  if (!rows) return null;
  return (
    <dl className="usage" data-testid="usage">
      {rows.map((r) => (
        <div key={r.label}>
          <dt>{r.label}</dt>
          <dd>{r.value}</dd>
        </div>
      ))}
    </dl>
  );
}
