/**
 * What an earlier attempt of the same run left in its model-call record: the number of its last call
 * (a resumed attempt numbers on from it, so a call number names one call of the run), whether the
 * file ends in a line its crash cut short, and the tool lists its calls name.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolSpec } from '../../providers/model-provider.js';
import { RUN_FILES } from '../storage/run-files.js';

export interface EarlierAttemptCalls {
  /** the highest call number on record (0 for none): a line cut short still used its number */
  lastCall: number;
  /** the file does not end with a line break */
  tornTail: boolean;
  toolSets: Record<string, ToolSpec[]>;
}

const CHUNK = 64 * 1024;
/** every line is JSON.stringify of a ModelCallLine, whose first key is its call number */
const LINE_START = /(?:^|\n)\{"call":(\d+)/g;

export function earlierAttemptCalls(runRoot: string): EarlierAttemptCalls {
  const found: EarlierAttemptCalls = { lastCall: 0, tornTail: false, toolSets: {} };
  let fd: number;
  try {
    fd = openSync(join(runRoot, RUN_FILES.modelCalls), 'r');
  } catch {
    return found; // a first attempt: no record yet
  }
  try {
    const size = fstatSync(fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      found.tornTail = last[0] !== 0x0a;
    }
    // from the end backwards, a chunk at a time, until a line's start is seen (lines are up to
    // capture.max_call_bytes long: a long run's file is not read whole)
    let tail = '';
    for (let end = size; end > 0 && found.lastCall === 0; ) {
      const start = Math.max(0, end - CHUNK);
      const buf = Buffer.alloc(end - start);
      readSync(fd, buf, 0, buf.length, start);
      // a chunk may start inside a character: latin1 keeps bytes one-to-one, and the pattern is ASCII
      tail = buf.toString('latin1') + tail;
      const text = start === 0 ? tail : tail.slice(tail.indexOf('\n') === -1 ? tail.length : tail.indexOf('\n'));
      for (const m of text.matchAll(LINE_START)) found.lastCall = Math.max(found.lastCall, Number(m[1]));
      end = start;
    }
  } finally {
    closeSync(fd);
  }
  try {
    found.toolSets = JSON.parse(readFileSync(join(runRoot, RUN_FILES.modelTools), 'utf8')) as Record<string, ToolSpec[]>;
  } catch {
    // no call with tools yet, or a file the crash cut: the sets written from now on are listed
  }
  return found;
}
