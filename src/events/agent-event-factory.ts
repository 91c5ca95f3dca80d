/** The one constructor of AgentEvents; the bus and replay readers use it. */
import { AGENT_STREAMS, type AgentEventMap, type AgentEventOf, type AgentStream } from './agent-event.js';

const STREAMS: ReadonlySet<string> = new Set(AGENT_STREAMS);

export function isAgentStream(x: unknown): x is AgentStream {
  return typeof x === 'string' && STREAMS.has(x);
}

export function makeAgentEvent<S extends AgentStream>(runId: string, seq: number, ts: number, stream: S, data: AgentEventMap[S]): AgentEventOf<S> {
  if (!STREAMS.has(stream)) {
    throw new TypeError(`AgentEvent.stream must be one of ${AGENT_STREAMS.join('|')}, got ${JSON.stringify(stream)}`);
  }
  // Same key order everywhere so events.jsonl lines are stable for replay.
  return { runId, seq, ts, stream, data } as AgentEventOf<S>;
}
