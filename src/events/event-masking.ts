/**
 * What an event may carry out of the run: the data of every event published on a run's bus, with the
 * server's secrets masked (see secret-masker.ts); a tool call's events (its arguments — the command
 * line of an exec —, progress and result) have credential-looking values masked as well (see
 * secret-values.ts). The bus applies it once, so every subscriber — events.jsonl and replay, the
 * bridge and its SSE/WebSocket/IM/terminal adapters, telemetry, the raw-stream log, a shared
 * store — sees the same masked event.
 */
import type { AgentEventMap, AgentStream } from './agent-event.js';
import { mapStrings, serverSecrets } from './secret-masker.js';
import { maskSecretValues } from './secret-values.js';

export function maskEventData<S extends AgentStream>(stream: S, data: AgentEventMap[S]): AgentEventMap[S] {
  if (stream === 'tool') return mapStrings(data, maskSecretValues);
  return serverSecrets.maskDeep(data);
}
