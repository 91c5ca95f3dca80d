import type { AgentEventMap, AgentStream } from '../events/agent-event.js';

/** How runtime parts put an event on the run's bus without knowing the bus (the engine binds it). */
export type PublishFn = <S extends AgentStream>(stream: S, data: AgentEventMap[S]) => void;

export const noopPublish: PublishFn = () => {};
