/**
 * Per-operation JSONL log of process events:
 * `<dataDir>/process-events/<sessionId>/<operationId>.jsonl`.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { RuntimeProcessEvent } from './process-event.js';
import { sanitizeProcessPayload } from './process-payload-sanitizer.js';
import { writeWholeFile } from './whole-file-write.js';

export interface RuntimeProcessLogRef {
  type: 'runtime_process_log';
  sessionId: string;
  operationId: string;
  path: string;
}

export interface AppendRuntimeProcessLogParams {
  dataDir: string;
  sessionId: string;
  operationId: string;
  /** one event, or several written in one append (in order) */
  event: RuntimeProcessEvent | readonly RuntimeProcessEvent[];
}

function linesOf(e: RuntimeProcessEvent | readonly RuntimeProcessEvent[]): string {
  return isEventList(e) ? e.map(processLogLine).join('') : processLogLine(e);
}

function isEventList(e: RuntimeProcessEvent | readonly RuntimeProcessEvent[]): e is readonly RuntimeProcessEvent[] {
  return Array.isArray(e);
}

const SAFE_ID = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,199}$/;

/** Throws a TypeError naming the field when an id could leave its folder or is not a plain name. */
export function assertSafeLogId(field: string, id: unknown): asserts id is string {
  if (typeof id !== 'string' || !SAFE_ID.test(id) || id.includes('..')) {
    throw new TypeError(`${field} must be 1-200 chars of [A-Za-z0-9_.:-], not starting with '.' and without '..', got ${JSON.stringify(id) ?? String(id)}`);
  }
}

export function runtimeProcessLogPath(dataDir: string, sessionId: string, operationId: string): string {
  if (typeof dataDir !== 'string' || dataDir === '') throw new TypeError('dataDir must be a non-empty string');
  assertSafeLogId('sessionId', sessionId);
  assertSafeLogId('operationId', operationId);
  const root = resolve(dataDir, 'process-events');
  const p = join(root, sessionId, `${operationId}.jsonl`);
  // Belt and braces: the regex already forbids separators.
  if (!p.startsWith(root + sep)) throw new TypeError(`process log path escapes dataDir: ${p}`);
  return p;
}

/**
 * One JSON line. The payload is sanitised again (idempotent for events from makeProcessEvent) so a
 * hand-built event with secrets, cycles, bigints or huge values can neither leak nor crash the log.
 */
export function processLogLine(event: RuntimeProcessEvent): string {
  const safe = event.payload === undefined ? event : { ...event, payload: sanitizeProcessPayload(event.payload) };
  try {
    return `${JSON.stringify(safe)}\n`;
  } catch {
    return `${JSON.stringify(sanitizeProcessPayload(safe, { maxDepth: 12 }))}\n`;
  }
}

function ref(sessionId: string, operationId: string, path: string): RuntimeProcessLogRef {
  return { type: 'runtime_process_log', sessionId, operationId, path };
}

export async function appendRuntimeProcessLog(params: AppendRuntimeProcessLogParams): Promise<RuntimeProcessLogRef> {
  const path = runtimeProcessLogPath(params.dataDir, params.sessionId, params.operationId);
  const line = linesOf(params.event);
  // the folder exists after the operation's first line: a mkdir per line was a third of the file work
  try {
    await writeWholeFile(path, line, 'a');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await mkdir(resolve(path, '..'), { recursive: true });
    await writeWholeFile(path, line, 'a');
  }
  return ref(params.sessionId, params.operationId, path);
}

export function appendRuntimeProcessLogSync(params: AppendRuntimeProcessLogParams): RuntimeProcessLogRef {
  const path = runtimeProcessLogPath(params.dataDir, params.sessionId, params.operationId);
  mkdirSync(resolve(path, '..'), { recursive: true });
  appendFileSync(path, linesOf(params.event), 'utf8');
  return ref(params.sessionId, params.operationId, path);
}
