/** What the fake services share: an HTTP server on 127.0.0.1:0 (with a WebSocket path when asked), and queued faults. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export class LoopbackServer {
  url = '';
  private server: Server | null = null;
  private wss: WebSocketServer | null = null;
  private readonly sockets = new Set<WebSocket>();

  async start(route: (req: IncomingMessage, res: ServerResponse) => Promise<void>, ws?: { path: string; onSocket(ws: WebSocket): void }): Promise<string> {
    this.server = createServer((req, res) => void route(req, res));
    if (ws) {
      this.wss = new WebSocketServer({ noServer: true });
      this.server.on('upgrade', (req, socket, head) => {
        if (!req.url?.startsWith(ws.path)) return socket.destroy();
        this.wss!.handleUpgrade(req, socket, head, (s) => {
          this.sockets.add(s);
          s.on('close', () => this.sockets.delete(s));
          ws.onSocket(s);
        });
      });
    }
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** The WebSocket clients connected now. */
  get open(): WebSocket[] {
    return [...this.sockets].filter((s) => s.readyState === s.OPEN);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.terminate();
    this.wss?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** Faults to answer the next calls with, by a key the fake chooses (a method, a route). */
export class FaultQueue<F> {
  private readonly queued = new Map<string, F[]>();

  add(key: string, fault: F, times: number): void {
    const q = this.queued.get(key) ?? [];
    for (let i = 0; i < times; i++) q.push(fault);
    this.queued.set(key, q);
  }

  /** The next fault for the first key `matches` accepts, taken off its queue. */
  take(matches: (key: string) => boolean): F | undefined {
    for (const [key, q] of this.queued) if (q.length && matches(key)) return q.shift();
    return undefined;
  }
}
