/** A run's live view: its SSE frames folded by applyFrame, from the start, reconnecting on its own. */
import { useEffect, useReducer, useState } from 'react';
import { applyFrame, emptyRunView, type RunView } from './run-state.js';
import { followRun, type WireFrame } from './run-stream.js';

type Action = { frame: WireFrame } | { reset: true };

function reducer(s: RunView, a: Action): RunView {
  return 'reset' in a ? emptyRunView() : applyFrame(s, a.frame);
}

export function useRunView(runId: string): { view: RunView; conn: string } {
  const [view, dispatch] = useReducer(reducer, undefined, emptyRunView);
  const [conn, setConn] = useState('connecting');
  useEffect(() => {
    dispatch({ reset: true });
    return followRun(runId, { onFrame: (frame) => dispatch({ frame }), onState: setConn });
  }, [runId]);
  return { view, conn };
}
