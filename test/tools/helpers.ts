import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperationReporter, ProgressUpdate } from '../../src/events/operation-reporter-types.js';
import type { ProcessSource, ProcessTargetType } from '../../src/events/process-event.js';

/** Non-zombie processes whose command line contains `marker` (this sandbox's init never reaps orphans). */
export function liveProcesses(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,pgid,stat,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .slice(1)
    .filter((l) => l.includes(marker))
    .filter((l) => !/^\s*\d+\s+\d+\s+Z/.test(l))
    .filter((l) => !l.includes('ps -eo'));
}

/** A unique `sleep` argument, so the process table can be searched for exactly this test's children. */
export function marker(): string {
  return `${300 + Math.floor(Math.random() * 600)}.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

/**
 * A folder of this test file's own to run commands in: the shared temp folder holds other users'
 * folders (a CI checkout owned by another uid), which a sandbox with it as workspace cannot enter.
 */
export function ownWorkdir(): string {
  return mkdtempSync(join(tmpdir(), 'runtrail-exec-'));
}

export interface ReporterCall {
  op: string;
  method: string;
  arg?: unknown;
  payload?: unknown;
}

/** Records every call, children included, into one shared list. */
export function recordingReporter(calls: ReporterCall[] = [], operationId = 'op_root'): OperationReporter & { calls: ReporterCall[] } {
  let n = 0;
  const r = {
    calls,
    operationId,
    start: (message?: string, payload?: unknown) => void calls.push({ op: operationId, method: 'start', arg: message, payload }),
    progress: (u: ProgressUpdate) => void calls.push({ op: operationId, method: 'progress', arg: u }),
    stage: (stage: string, message?: string) => void calls.push({ op: operationId, method: 'stage', arg: { stage, message } }),
    complete: (message?: string, payload?: unknown) => void calls.push({ op: operationId, method: 'complete', arg: message, payload }),
    fail: (message?: string, payload?: unknown) => void calls.push({ op: operationId, method: 'fail', arg: message, payload }),
    cancel: (message?: string) => void calls.push({ op: operationId, method: 'cancel', arg: message }),
    skip: (message?: string) => void calls.push({ op: operationId, method: 'skip', arg: message }),
    child: (o: { operationId?: string; targetType: ProcessTargetType; source: ProcessSource; message?: string }) => {
      const id = o.operationId ?? `${operationId}.${++n}`;
      calls.push({ op: operationId, method: 'child', arg: { ...o, operationId: id } });
      return recordingReporter(calls, id);
    },
  };
  return r;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `pred` holds or `ms` pass; returns whether it held. */
export async function eventually(pred: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await sleep(20);
  }
  return pred();
}
