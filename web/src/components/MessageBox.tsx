import { useState } from 'react';
import { api } from '../api.js';

/**
 * A message to the live run: `steer` reaches the model at its next turn (after the tool calls under
 * way), `follow_up` after its answer, which then goes on. What was sent shows in the steps, in place.
 */
export function MessageBox({ runId, onSent }: { runId: string; onSent(): void }) {
  const [text, setText] = useState('');
  const [mode, setMode] = useState<'steer' | 'follow_up'>('steer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const send = async (ev: React.FormEvent): Promise<void> => {
    ev.preventDefault();
    if (!text.trim()) return;
    setBusy(true);
    setError('');
    try {
      await api(`/api/runs/${encodeURIComponent(runId)}/messages`, {
        method: 'POST',
        body: JSON.stringify({ text: text.trim(), mode }),
        headers: { 'x-runtrail-client': 'web' },
      });
      setText('');
      onSent();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="message-box" onSubmit={(e) => void send(e)} data-testid="message-box">
      <textarea
        aria-label="message to the run"
        rows={2}
        value={text}
        placeholder="Tell the agent something while it works…"
        onChange={(e) => setText(e.target.value)}
      />
      <div className="row">
        <label className="inline">
          <input type="radio" name="mode" checked={mode === 'steer'} onChange={() => setMode('steer')} /> steer (next turn)
        </label>
        <label className="inline">
          <input type="radio" name="mode" checked={mode === 'follow_up'} onChange={() => setMode('follow_up')} /> follow up (after its answer)
        </label>
        <button type="submit" disabled={busy || !text.trim()}>
          Send
        </button>
      </div>
      {error && <p className="error">{error}</p>}
    </form>
  );
}
