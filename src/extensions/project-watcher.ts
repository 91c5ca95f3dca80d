/**
 * `serve --watch`: the definition folders of the project and of the user (agents/, skills/,
 * plugins/, config.json, mcp.json) are watched; after a change settles, `onChange` runs once (the
 * caller re-reads the registry for the next run). A folder created later is picked up at the next change.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

export interface ProjectWatcher {
  close(): void;
}

const WATCHED = ['agents', 'skills', 'plugins'];

export function watchProject(roots: string[], onChange: () => Promise<void> | void, settleMs = 200): ProjectWatcher {
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let running = Promise.resolve();

  const arm = () => {
    for (const w of watchers) w.close();
    watchers = [];
    const add = (dir: string, recursive: boolean, filter?: (name: string) => boolean) => {
      if (!existsSync(dir)) return;
      try {
        const w = watch(dir, { recursive, persistent: false }, (_event, name) => {
          if (filter && !filter(String(name ?? ''))) return;
          schedule();
        });
        w.on('error', () => undefined); // a folder removed under us: re-armed at the next change
        watchers.push(w);
      } catch {
        // a folder we may not watch is simply not watched
      }
    };
    for (const root of roots) {
      // the root itself: config.json, mcp.json and the definition folders appearing or going
      add(root, false, (n) => n === 'config.json' || n === 'mcp.json' || WATCHED.includes(n));
      for (const d of WATCHED) add(join(root, d), true);
    }
  };

  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(async () => {
        if (closed) return;
        try {
          await onChange();
        } finally {
          if (!closed) arm();
        }
      });
    }, settleMs);
    timer.unref?.();
  };

  arm();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
      watchers = [];
    },
  };
}
