/** Live-stream figures for /metrics. */
export interface StreamCounters {
  sseClients: number;
  wsClients: number;
  framesSent: number;
  clientsDropped: number;
}

export function newStreamCounters(): StreamCounters {
  return { sseClients: 0, wsClients: 0, framesSent: 0, clientsDropped: 0 };
}
