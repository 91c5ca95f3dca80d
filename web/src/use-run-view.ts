/** A run's live view: its SSE frames folded by applyFrame, from the start, reconnecting on its own. */
import { useEffect, useReducer, useState } from 'react';
import { applyFrames, emptyRunView, type RunView } from './run-state.js';
import { frameBatches } from './frame-batches.js';
import { followRun, type WireFrame } from './run-stream.js';

type Action = { frames: WireFrame[] } | { reset: true };

function reducer(s: RunView, a: Action): RunView {
  return 'reset' in a ? emptyRunView() : applyFrames(s, a.frames);
}

export function useRunView(runId: string): { view: RunView; conn: string } {
  const [view, dispatch] = useReducer(reducer, undefined, emptyRunView);
  const [conn, setConn] = useState('connecting');
  useEffect(() => {
    dispatch({ reset: true });
    return followRun(runId, { onFrame: frameBatches((frames) => dispatch({ frames })), onState: setConn });
  }, [runId]);
  return { view, conn };
}
