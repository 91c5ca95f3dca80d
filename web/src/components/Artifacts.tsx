import { useState } from 'react';
import { apiText, withToken, type PublicDocument } from '../api.js';
import { JsonTree } from './JsonTree.js';
import { Markdown } from './Markdown.js';

function artifactUrl(runId: string, path: string): string {
  const rel = path.replace(/^artifacts\//, '');
  return `/api/runs/${encodeURIComponent(runId)}/artifacts/${rel.split('/').map(encodeURIComponent).join('/')}`;
}

function Preview({ doc, text }: { doc: PublicDocument; text: string }) {
  if (doc.path.endsWith('.json')) {
    try {
      return <JsonTree value={JSON.parse(text)} />;
    } catch {
      return <pre>{text}</pre>;
    }
  }
  if (doc.path.endsWith('.md')) return <Markdown text={text} />;
  return <pre>{text.length > 100_000 ? `${text.slice(0, 100_000)}…` : text}</pre>;
}

export function Artifacts({ runId, docs }: { runId: string; docs: PublicDocument[] }) {
  const [open, setOpen] = useState<{ doc: PublicDocument; text: string } | null>(null);
  const [err, setErr] = useState('');
  if (!docs.length) return <p className="muted">No artifacts yet.</p>;
  const show = async (doc: PublicDocument): Promise<void> => {
    setErr('');
    try {
      setOpen({ doc, text: await apiText(artifactUrl(runId, doc.path)) });
    } catch (e) {
      setErr(`${doc.path}: ${(e as Error).message}`);
    }
  };
  return (
    <div>
      <ul className="artifacts">
        {docs.map((d) => (
          <li key={d.path}>
            <button className="link" onClick={() => void show(d)} data-artifact={d.path}>
              {d.path.replace(/^artifacts\//, '')}
            </button>
            <span className="muted">
              {' '}
              {d.type} · {d.bytes} B · {d.audience}
            </span>
            <a className="download" href={withToken(`${artifactUrl(runId, d.path)}?download=1`)} download>
              download
            </a>
            {d.description && <div className="muted small">{d.description}</div>}
          </li>
        ))}
      </ul>
      {err && <p className="error">{err}</p>}
      {open && (
        <div className="preview" data-testid="artifact-preview">
          <div className="preview-head">
            <strong>{open.doc.path}</strong>
            <button className="link" onClick={() => setOpen(null)}>
              close
            </button>
          </div>
          <Preview doc={open.doc} text={open.text} />
        </div>
      )}
    </div>
  );
}
