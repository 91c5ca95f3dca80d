/** Live-stream figures for /metrics, and the stream slots each client address holds. */
export interface StreamCounters {
  sseClients: number;
  wsClients: number;
  framesSent: number;
  clientsDropped: number;
  /** Live streams by client address. */
  byClient: Map<string, number>;
}

export function newStreamCounters(): StreamCounters {
  return { sseClients: 0, wsClients: 0, framesSent: 0, clientsDropped: 0, byClient: new Map() };
}

/** Takes one of `client`'s stream slots; the returned function gives it back (once). */
export function takeClientSlot(counters: StreamCounters, client: string): () => void {
  counters.byClient.set(client, (counters.byClient.get(client) ?? 0) + 1);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const n = (counters.byClient.get(client) ?? 1) - 1;
    if (n > 0) counters.byClient.set(client, n);
    else counters.byClient.delete(client);
  };
}
