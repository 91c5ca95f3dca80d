/**
 * Where schedules and what their fires did are kept: the data dir's `schedules/schedules.json` for
 * one node (FileScheduleStore, safe for several processes on one data dir), PostgreSQL for several
 * (pg-trigger-store.ts). The claim is what makes a fire time happen once across every node.
 */
import { join } from 'node:path';
import { LockedJsonFile } from './locked-json-file.js';
import { FIRES_KEPT, type FireRecord, type Schedule } from './types.js';

export interface ScheduleStore {
  list(): Promise<Schedule[]>;
  get(id: string): Promise<Schedule | null>;
  /** Creates or replaces a schedule as given. */
  put(s: Schedule): Promise<void>;
  remove(id: string): Promise<boolean>;
  /**
   * Claims one fire time for exactly one caller across every node, and gives that caller the
   * schedule as it is then (what other nodes recorded too: their runs, failures, backoff), so it
   * need not read it again. Null when it was claimed already, or (unless `manual`) the schedule is
   * paused, gone, or changed since `version`. A claim records the fire as `waiting` and (unless
   * manual) moves `due_after` to it.
   */
  claim(id: string, fireTime: string, version: number, manual: boolean, at: string): Promise<Schedule | null>;
  /** The record of a claimed fire, replaced (matched by fire_time). */
  record(id: string, fire: FireRecord): Promise<void>;
  setState(id: string, state: { failures: number; backoff_until: string | null }): Promise<void>;
  /** Changes whenever anything was written: a node re-reads the list when it moved. */
  stamp(): Promise<string>;
  close(): Promise<void>;
}

interface SchedulesFile {
  schedules: Schedule[];
}

/** Adds or replaces a fire record, newest first, at most FIRES_KEPT. */
export function withFire(fires: FireRecord[], fire: FireRecord): FireRecord[] {
  const rest = fires.filter((f) => f.fire_time !== fire.fire_time);
  return [fire, ...rest].sort((a, b) => (a.fire_time < b.fire_time ? 1 : a.fire_time > b.fire_time ? -1 : 0)).slice(0, FIRES_KEPT);
}

export class FileScheduleStore implements ScheduleStore {
  private readonly file: LockedJsonFile<SchedulesFile>;

  constructor(dataDir: string) {
    this.file = new LockedJsonFile<SchedulesFile>(join(dataDir, 'schedules', 'schedules.json'), () => ({ schedules: [] }));
  }

  async list(): Promise<Schedule[]> {
    return (await this.file.read()).schedules;
  }

  async get(id: string): Promise<Schedule | null> {
    return (await this.list()).find((s) => s.schedule_id === id) ?? null;
  }

  put(s: Schedule): Promise<void> {
    return this.file.update((f) => {
      const i = f.schedules.findIndex((x) => x.schedule_id === s.schedule_id);
      if (i >= 0) f.schedules[i] = s;
      else f.schedules.push(s);
      return { result: undefined, changed: true };
    });
  }

  remove(id: string): Promise<boolean> {
    return this.file.update((f) => {
      const before = f.schedules.length;
      f.schedules = f.schedules.filter((s) => s.schedule_id !== id);
      return { result: f.schedules.length < before, changed: f.schedules.length < before };
    });
  }

  claim(id: string, fireTime: string, version: number, manual: boolean, at: string): Promise<Schedule | null> {
    return this.file.update((f) => {
      const s = f.schedules.find((x) => x.schedule_id === id);
      if (!s || s.fires.some((x) => x.fire_time === fireTime)) return { result: null, changed: false };
      if (!manual && (!s.enabled || s.version !== version || s.due_after >= fireTime)) return { result: null, changed: false };
      s.fires = withFire(s.fires, { fire_time: fireTime, at, outcome: 'waiting', ...(manual ? { manual: true } : {}) });
      if (!manual) s.due_after = fireTime;
      // handed over once written: the caller may change it, the file read for this turn is not kept
      return { result: s, changed: true };
    });
  }

  record(id: string, fire: FireRecord): Promise<void> {
    return this.file.update((f) => {
      const s = f.schedules.find((x) => x.schedule_id === id);
      if (!s) return { result: undefined, changed: false };
      s.fires = withFire(s.fires, fire);
      return { result: undefined, changed: true };
    });
  }

  setState(id: string, state: { failures: number; backoff_until: string | null }): Promise<void> {
    return this.file.update((f) => {
      const s = f.schedules.find((x) => x.schedule_id === id);
      if (!s) return { result: undefined, changed: false };
      s.failures = state.failures;
      s.backoff_until = state.backoff_until;
      return { result: undefined, changed: true };
    });
  }

  async stamp(): Promise<string> {
    return String(await this.file.mtime());
  }

  async close(): Promise<void> {}
}
