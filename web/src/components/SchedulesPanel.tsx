import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { fireChip } from '../fire-label.js';

/** One fire of a schedule: the run it started, or why it was skipped. */
export interface FireRecord {
  fire_time: string;
  outcome: 'started' | 'skipped' | 'not_started' | 'waiting';
  reason?: string;
  detail?: string;
  run_id?: string;
  run_status?: string;
  manual?: boolean;
}

export interface ScheduleView {
  schedule_id: string;
  agent: string;
  goal?: string;
  every?: string;
  cron?: string;
  at?: string;
  tz: string;
  enabled: boolean;
  source: string;
  next_run_at: string | null;
  runs: FireRecord[];
  backoff: { failures: number; until: string } | null;
}

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');

function timing(s: ScheduleView): string {
  const t = s.every ? `every ${s.every}` : s.cron ? `cron ${s.cron}` : `at ${s.at ?? ''}`;
  return s.tz === 'UTC' ? t : `${t} (${s.tz})`;
}

/** The schedules and what their recent fire times did; pause, resume, run now, remove. Polls every 5 s. */
export function SchedulesPanel({ onOpen }: { onOpen: (runId: string) => void }) {
  const [list, setList] = useState<ScheduleView[] | null>(null);
  const [error, setError] = useState('');
  const [tick, setTick] = useState(0);
  /** the schedule whose removal waits for a second click */
  const [removing, setRemoving] = useState<string | null>(null);

  useEffect(() => {
    let stop = false;
    api<{ schedules: ScheduleView[] }>('/api/schedules').then(
      (r) => !stop && (setList(r.schedules), setError('')),
      (e: Error) => !stop && setError(e.message),
    );
    const t = setTimeout(() => setTick((n) => n + 1), 5000);
    return () => {
      stop = true;
      clearTimeout(t);
    };
  }, [tick]);

  const act = async (path: string, init: RequestInit): Promise<void> => {
    try {
      await api(path, init);
      setTick((n) => n + 1);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  // a server without schedules (404) or none made yet: nothing to show
  if (!list?.length) return error && !/no route/.test(error) ? <p className="error">{error}</p> : null;
  return (
    <section className="card schedules" data-testid="schedules">
      <h2>Schedules ({list.length})</h2>
      {error && <p className="error">{error}</p>}
      <ul className="schedule-list">
        {list.map((s) => (
          <li key={s.schedule_id} data-schedule={s.schedule_id}>
            <div className="row">
              <strong>{s.schedule_id}</strong>
              <span>{s.agent}</span>
              <span className="muted small">{timing(s)}</span>
              <span className={`pill ${s.enabled ? '' : 'st-cancelled'}`}>
                {s.enabled ? (s.backoff ? `backing off (${s.backoff.failures} failed)` : `next ${when(s.next_run_at)}`) : 'paused'}
              </span>
              <button
                className="secondary"
                onClick={() =>
                  void act(`/api/schedules/${encodeURIComponent(s.schedule_id)}`, { method: 'PATCH', body: JSON.stringify({ enabled: !s.enabled }) })
                }
              >
                {s.enabled ? 'Pause' : 'Resume'}
              </button>
              <button className="secondary" onClick={() => void act(`/api/schedules/${encodeURIComponent(s.schedule_id)}/run`, { method: 'POST', body: '{}' })}>
                Run now
              </button>
              {removing === s.schedule_id ? (
                <span className="row small" data-testid="confirm-remove">
                  Remove {s.schedule_id}?
                  <button
                    className="danger"
                    onClick={() => {
                      setRemoving(null);
                      void act(`/api/schedules/${encodeURIComponent(s.schedule_id)}`, { method: 'DELETE' });
                    }}
                  >
                    Remove
                  </button>
                  <button className="secondary" onClick={() => setRemoving(null)}>
                    Keep
                  </button>
                </span>
              ) : (
                <button className="secondary" onClick={() => setRemoving(s.schedule_id)}>
                  Remove…
                </button>
              )}
            </div>
            {s.runs.length > 0 && (
              <ul className="fires small">
                {s.runs.slice(0, 5).map((f) => (
                  <li key={f.fire_time}>
                    <span className="muted">{when(f.fire_time)}</span>{' '}
                    {f.run_id && (
                      <>
                        <a href={`#/runs/${encodeURIComponent(f.run_id)}`} onClick={(e) => (e.preventDefault(), onOpen(f.run_id!))}>
                          {f.run_id}
                        </a>{' '}
                      </>
                    )}
                    <span className={`pill st-${fireChip(f).status}`} data-testid="fire-chip">
                      {fireChip(f).text}
                    </span>
                    {f.detail && <span className="muted"> {f.detail}</span>}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
