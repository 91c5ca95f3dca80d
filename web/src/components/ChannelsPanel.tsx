import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { channelRows, type ChannelStatus } from '../channel-rows.js';

/** The chat channels this server runs (Telegram, Slack, Feishu): shown only when there are some; polled. */
export function ChannelsPanel() {
  const [channels, setChannels] = useState<ChannelStatus[]>([]);
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (): Promise<void> => {
      try {
        const r = await api<{ channels: ChannelStatus[] }>('/api/channels');
        if (!stop) setChannels(r.channels);
      } catch {
        // the runs list says when the server cannot be reached
      }
      if (!stop) timer = setTimeout(() => void load(), 5000);
    };
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, []);
  if (!channels.length) return null;
  return (
    <section className="card channels">
      <h2>Chat channels</h2>
      <ul className="channel-list">
        {channelRows(channels).map((c) => (
          <li key={c.name} data-channel={c.name}>
            <span className={`pill ${c.tone === 'ok' ? 'st-completed' : c.tone === 'fail' ? 'st-failed' : ''}`}>{c.state}</span>
            <span className="plugin">{c.name}</span>
            <span className="muted">{c.counts}</span>
            {c.error && <span className="error">{c.error}</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}
