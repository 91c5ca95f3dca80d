/** A webhook receiver on loopback for tests: records each request, answers as the test says (or never). */
import http from 'node:http';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export class Receiver {
  readonly got: Received[] = [];
  /** what the next requests get: a status, or 'hang' (never answered) */
  answers: Array<number | 'hang'> = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      this.got.push({ headers, body, at: Date.now() });
      const a = this.answers.shift() ?? 200;
      if (a === 'hang') return;
      res.writeHead(a).end(a >= 400 ? 'nope' : 'ok');
    });
  });
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
