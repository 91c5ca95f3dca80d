import { useEffect, useState } from 'react';
import { TOKEN_KEY, token } from './api.js';
import { ComparePage } from './components/ComparePage.js';
import { ChannelsPanel } from './components/ChannelsPanel.js';
import { NewRunForm } from './components/NewRunForm.js';
import { RunPage } from './components/RunPage.js';
import { RunsList } from './components/RunsList.js';
import { SchedulesPanel } from './components/SchedulesPanel.js';

type Route = { page: 'home' } | { page: 'run'; runId: string } | { page: 'compare'; a: string; b: string };

function routeOf(hash: string): Route {
  const run = /^#\/runs\/([^/?#]+)/.exec(hash);
  if (run) return { page: 'run', runId: decodeURIComponent(run[1]) };
  const cmp = /^#\/compare\/([^/?#]+)\/([^/?#]+)/.exec(hash);
  if (cmp) return { page: 'compare', a: decodeURIComponent(cmp[1]), b: decodeURIComponent(cmp[2]) };
  return { page: 'home' };
}

export function App() {
  const [route, setRoute] = useState(routeOf(location.hash));
  const [refresh, setRefresh] = useState(0);
  const [tok, setTok] = useState(token());
  useEffect(() => {
    const on = (): void => setRoute(routeOf(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  const open = (id: string): void => {
    location.hash = `#/runs/${encodeURIComponent(id)}`;
  };
  return (
    <div className="app">
      <header>
        <a href="#/" className="brand">
          Runtrail
        </a>
        <details className="token">
          <summary>token</summary>
          <input
            type="password"
            aria-label="API token"
            value={tok}
            placeholder="RUNTRAIL_API_TOKEN"
            onChange={(e) => {
              setTok(e.target.value);
              localStorage.setItem(TOKEN_KEY, e.target.value);
            }}
          />
        </details>
      </header>
      <main>
        {route.page === 'run' ? (
          <RunPage runId={route.runId} />
        ) : route.page === 'compare' ? (
          <ComparePage a={route.a} b={route.b} />
        ) : (
          <div className="home">
            {/* the runs list keeps the wide column whatever else there is: the form, schedules and
                channels stack in the narrow one */}
            <div className="home-side">
              {/* a new token reloads what a missing one could not fetch (plugins, runs) */}
              <NewRunForm
                key={`form:${tok}`}
                onCreated={(id) => {
                  setRefresh(refresh + 1);
                  open(id);
                }}
              />
              <SchedulesPanel key={`schedules:${tok}`} onOpen={open} />
              <ChannelsPanel key={`channels:${tok}`} />
            </div>
            <div className="home-main">
              <RunsList key={`runs:${tok}`} onOpen={open} refreshKey={refresh} />
            </div>
          </div>
        )}
      </main>
    </div>
  );
}
