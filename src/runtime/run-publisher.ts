/** A run's publishing as its parts see it: a function that puts one event on the run's bus. */
import type { AgentEventMap, AgentStream } from '../events/agent-event.js';

/** How runtime parts put an event on the run's bus without knowing the bus (the engine binds it). */
export type PublishFn = <S extends AgentStream>(stream: S, data: AgentEventMap[S]) => void;

export const noopPublish: PublishFn = () => {};

/** One event as its publisher hands it over, before the bus numbers it: what reads a run's
 *  publishing as it happens (its metrics, its state) is given. */
export type PublishedEvent = { [S in AgentStream]: { stream: S; data: AgentEventMap[S] } }[AgentStream];

/** `publish`, with `read` told of each event first. */
export function publishing(read: (event: PublishedEvent) => void, publish: PublishFn): PublishFn {
  return (stream, data) => {
    // a stream and its own payload type: the pair is one PublishedEvent (TypeScript does not relate the two generics)
    read({ stream, data } as PublishedEvent);
    publish(stream, data);
  };
}
