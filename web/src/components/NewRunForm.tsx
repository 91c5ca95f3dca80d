import { useEffect, useState } from 'react';
import { api, ApiError, authHeaders, type JsonSchema, type PluginInfo } from '../api.js';
import { mainAgent } from '../main-agent.js';

function fieldType(s: JsonSchema): string {
  if (s.enum) return 'enum';
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (t) return t;
  const alt = s.anyOf?.find((a) => a.type && a.type !== 'null');
  return alt ? fieldType(alt) : 'string';
}

async function upload(file: File): Promise<string> {
  const fd = new FormData();
  fd.append('file', file, file.name);
  const res = await fetch('/api/uploads', { method: 'POST', body: fd, headers: authHeaders() });
  const body = (await res.json()) as { path?: string; error?: { message: string } };
  if (!res.ok || !body.path) throw new Error(body.error?.message ?? `upload failed (${res.status})`);
  return body.path;
}

/** A form generated from the plugin's input JSON Schema; file inputs upload first and send the stored path. */
export function NewRunForm({ onCreated }: { onCreated: (runId: string) => void }) {
  const [plugins, setPlugins] = useState<PluginInfo[]>([]);
  const [name, setName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [files, setFiles] = useState<Record<string, File | null>>({});
  const [goal, setGoal] = useState('');
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string[]>([]);

  useEffect(() => {
    Promise.all([
      api<{ plugins: PluginInfo[] }>('/api/plugins'),
      // the newest run's agent is what this project was last run with
      api<{ runs: Array<{ plugin: string }> }>('/api/runs?limit=1').catch(() => ({ runs: [] })),
    ])
      .then(([r, newest]) => {
        // every agent the server offers, `chat` included (it needs only a goal)
        const list = r.plugins;
        setPlugins(list);
        setName(mainAgent(list, newest.runs[0]?.plugin ?? null));
      })
      .catch((e: Error) =>
        setError(e instanceof ApiError && e.status === 401 ? ['This server needs its API token: enter it under "token" at the top right.'] : [e.message]),
      );
  }, []);

  const plugin = plugins.find((p) => p.name === name);
  const props = Object.entries(plugin?.inputSchema.properties ?? {});
  const required = new Set(plugin?.inputSchema.required ?? []);

  const submit = async (ev: React.FormEvent): Promise<void> => {
    ev.preventDefault();
    if (!plugin) return;
    setBusy(true);
    setError([]);
    try {
      const input: Record<string, unknown> = {};
      for (const [key, schema] of props) {
        if (plugin.fileInputs.includes(key)) {
          const f = files[key];
          if (f) input[key] = await upload(f);
          else if (values[key]) input[key] = values[key];
          continue;
        }
        const raw = values[key];
        if (raw === undefined || raw === '') continue;
        const t = fieldType(schema);
        input[key] = t === 'integer' || t === 'number' ? Number(raw) : t === 'boolean' ? raw === 'true' : raw;
      }
      const body: Record<string, unknown> = { agent: plugin.name, input };
      if (goal.trim()) body.goal = goal.trim();
      if (model.trim()) body.model = model.trim();
      const r = await api<{ run_id: string }>('/api/runs', { method: 'POST', body: JSON.stringify(body) });
      onCreated(r.run_id);
    } catch (e) {
      const issues = e instanceof ApiError && Array.isArray(e.details.issues) ? (e.details.issues as Array<{ path: string; message: string }>) : [];
      // the server's message usually already quotes its issues: list each problem once
      const msg = (e as Error).message;
      setError([msg, ...issues.filter((i) => !msg.includes(i.message)).map((i) => `${i.path}: ${i.message}`)]);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card new-run" onSubmit={(e) => void submit(e)} aria-label="new run">
      <h2>New run</h2>
      <label>
        Agent
        <select value={name} onChange={(e) => setName(e.target.value)} name="plugin">
          {plugins.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name} {p.version}
            </option>
          ))}
        </select>
      </label>
      {plugin && <p className="muted small">{plugin.description}</p>}
      {props.map(([key, schema]) => {
        const isFile = plugin?.fileInputs.includes(key);
        const t = fieldType(schema);
        const label = `${key}${required.has(key) ? ' *' : ''}`;
        return (
          <label key={`${name}.${key}`}>
            {label}
            {schema.description && <span className="muted small"> {schema.description}</span>}
            {isFile ? (
              <input type="file" name={key} required={required.has(key)} onChange={(e) => setFiles({ ...files, [key]: e.target.files?.[0] ?? null })} />
            ) : t === 'enum' ? (
              <select name={key} required={required.has(key)} value={values[key] ?? ''} onChange={(e) => setValues({ ...values, [key]: e.target.value })}>
                <option value="">—</option>
                {(schema.enum ?? []).map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {String(v)}
                  </option>
                ))}
              </select>
            ) : t === 'boolean' ? (
              <select name={key} value={values[key] ?? ''} onChange={(e) => setValues({ ...values, [key]: e.target.value })}>
                <option value="">—</option>
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            ) : (
              <input
                name={key}
                required={required.has(key)}
                type={t === 'integer' || t === 'number' ? 'number' : 'text'}
                min={schema.minimum}
                max={schema.maximum}
                value={values[key] ?? ''}
                onChange={(e) => setValues({ ...values, [key]: e.target.value })}
              />
            )}
          </label>
        );
      })}
      <label>
        Goal
        <textarea name="goal" rows={2} placeholder={plugin?.defaultGoal} value={goal} onChange={(e) => setGoal(e.target.value)} />
      </label>
      <label>
        Model <span className="muted small">(provider:model, empty = server default)</span>
        <input name="model" value={model} onChange={(e) => setModel(e.target.value)} placeholder="offline" />
      </label>
      <button type="submit" disabled={busy || !plugin}>
        {busy ? 'Starting…' : 'Start run'}
      </button>
      {error.length > 0 && (
        <ul className="error" role="alert">
          {error.map((m, i) => (
            <li key={i}>{m}</li>
          ))}
        </ul>
      )}
    </form>
  );
}
