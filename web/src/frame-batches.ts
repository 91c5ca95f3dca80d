/**
 * Frames as the page applies them: those one read of the stream brings go to the state together (one
 * render per read, not one per frame), in the order they came.
 */
import type { WireFrame } from './wire-types.js';

export function frameBatches(apply: (frames: WireFrame[]) => void): (frame: WireFrame) => void {
  let pending: WireFrame[] = [];
  const flush = (): void => {
    const batch = pending;
    pending = [];
    apply(batch);
  };
  return (frame) => {
    if (pending.length === 0) queueMicrotask(flush);
    pending.push(frame);
  };
}
