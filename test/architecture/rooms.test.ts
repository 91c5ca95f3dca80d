/**
 * The rooms of src/runtime, enforced the way layers.test.ts enforces the top-level layers: each
 * import between two files of src/runtime must go to the file's own room or to a room before it.
 * The files at the root of src/runtime are the contract every room shares (the agent, the service's
 * API and its types, the run's states); they come first.
 */
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, readSource, sourceFiles, SRC } from './source-files.js';

/** Lowest first: a room may import the rooms before it. */
export const ROOMS = ['contract', 'metrics', 'storage', 'model-calls', 'loop', 'checkpoint', 'run', 'recovery', 'service'] as const;
export type Room = (typeof ROOMS)[number];

/**
 * Types a room may name from a room after it (erased at run time, so they do not order loading).
 * Each is a knot the code still has, written down so it cannot grow unseen.
 */
export const TYPES_FROM_LATER: Partial<Record<Room, Room[]>> = {
  // Agent.capture is a CaptureSettings; RunServiceApi reports the usage snapshot and hands out a run's model-call feed
  contract: ['metrics', 'model-calls'],
  // LocalRunStore keeps a run's checkpoint lines beside its status; request.json records the resolved capture
  storage: ['checkpoint', 'model-calls'],
  // a resumed attempt starts from recovery's ResumeDecision; preparation takes admission's ModelChoice
  run: ['recovery', 'service'],
  // RunRecovery hands the runs it takes up to the service's host, live runs and queue
  recovery: ['service'],
};

/** The room of a file under src/ (posix, relative to src/), or null outside src/runtime; 'unknown' for a folder no room names. */
export function roomOf(relToSrc: string): Room | 'unknown' | null {
  const parts = relToSrc.split('/');
  if (parts[0] !== 'runtime') return null;
  if (parts.length === 2) return 'contract';
  return (ROOMS as readonly string[]).includes(parts[1]) && parts[1] !== 'contract' ? (parts[1] as Room) : 'unknown';
}

/** Violations of one file (path relative to src/, posix). */
export function roomViolations(file: string, source: string): string[] {
  const from = roomOf(file);
  if (from === null) return [];
  if (from === 'unknown') return [`${file} is in a folder of src/runtime that is not a room (${ROOMS.join(', ')})`];
  const bad: string[] = [];
  for (const imp of importsOf(file, source)) {
    if (!imp.spec.startsWith('.')) continue;
    const target = relative(SRC, normalize(join(SRC, dirname(file), imp.spec)))
      .split(sep)
      .join('/');
    const to = roomOf(target);
    if (to === null || to === from) continue;
    if (to === 'unknown') {
      bad.push(`${file} (${from}) imports ${imp.spec}, which is in no room`);
      continue;
    }
    if (ROOMS.indexOf(to) < ROOMS.indexOf(from)) continue;
    if (imp.typeOnly && TYPES_FROM_LATER[from]?.includes(to)) continue;
    bad.push(
      `${file} (${from}) imports ${imp.spec}${imp.typeOnly ? ' (types)' : ''} from ${to}, a later room; ${from} may import ${ROOMS.slice(0, ROOMS.indexOf(from)).join(', ') || 'no other room'}` +
        (TYPES_FROM_LATER[from] ? ` and types of ${TYPES_FROM_LATER[from]!.join(', ')}` : ''),
    );
  }
  return bad;
}

describe('runtime rooms', () => {
  it('every import between files of src/runtime respects the rooms order', () => {
    const bad = sourceFiles().flatMap((f) => roomViolations(f, readSource(f)));
    expect(bad, bad.join('\n')).toEqual([]);
  });

  it('the check really fails on violations', () => {
    // a value from a later room
    expect(roomViolations('runtime/storage/x.ts', `import { RunService } from '../service/run-service.js';`)).toHaveLength(1);
    expect(roomViolations('runtime/loop/x.ts', `import { executeRun } from '../run/run-engine.js';`)).toHaveLength(1);
    expect(roomViolations('runtime/x.ts', `import { EventStore } from './storage/event-store.js';`)).toHaveLength(1);
    expect(roomViolations('runtime/run/x.ts', `const m = await import('../service/run-host.js');`)).toHaveLength(1);
    // types from a later room the table does not allow
    expect(roomViolations('runtime/loop/x.ts', `import type { RunRecord } from '../run/run-record.js';`)).toHaveLength(1);
    expect(roomViolations('runtime/metrics/x.ts', `import type { RunFolder } from '../storage/run-folder.js';`)).toHaveLength(1);
    // allowed types, but a value of the same room
    expect(roomViolations('runtime/recovery/x.ts', `import { RunHost } from '../service/run-host.js';`)).toHaveLength(1);
    // a folder that is no room
    expect(roomViolations('runtime/misc/x.ts', `export const a = 1;`)).toHaveLength(1);
    expect(roomViolations('runtime/loop/x.ts', `import { a } from '../misc/a.js';`)).toHaveLength(1);
  });

  it('allowed imports pass', () => {
    expect(roomViolations('runtime/service/x.ts', `import { executeRun } from '../run/run-engine.js';`)).toEqual([]);
    expect(roomViolations('runtime/storage/x.ts', `import type { Agent } from '../agent.js'; import { x } from './event-store.js';`)).toEqual([]);
    expect(roomViolations('runtime/recovery/x.ts', `import type { RunHost } from '../service/run-host.js';`)).toEqual([]);
    expect(roomViolations('runtime/x.ts', `import type { CaptureSettings } from './model-calls/capture-settings.js';`)).toEqual([]);
    expect(roomViolations('runtime/run/x.ts', `import { Tool } from '../../tools/tool.js';`)).toEqual([]);
    expect(roomViolations('server/x.ts', `import { RunService } from '../runtime/service/run-service.js';`)).toEqual([]);
  });
});
