/**
 * Test helpers for triggers: a fake clock, a model whose goal says how long to take ("wait:3000") or
 * to fail ("fail"), a real RunService and TriggerHost over a temp data dir, and a server in front.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Clock } from '../../src/triggers/clock.js';
import type { ModelProvider, ModelRequest, ModelStreamPart } from '../../src/providers/model-provider.js';
import { createTextOnlyPlugin } from '../../src/plugins/text-only-plugin.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { TriggerHost, type TriggerHostOptions } from '../../src/triggers/trigger-host.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { triggerConfig } from '../../src/triggers/trigger-config.js';
import { checkPluginInput } from '../../src/runtime/plugin-input.js';

/** A clock the test moves: timers fire in order as `advance` passes them. */
export class FakeClock implements Clock {
  private t: number;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private seq = 0;
  constructor(start: number | string) {
    this.t = typeof start === 'string' ? Date.parse(start) : start;
  }
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): () => void {
    const id = ++this.seq;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  }
  /** Moves time forward by `ms`, firing each timer due on the way (at its own instant). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = end;
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
}

/** Answers "ok: <goal>"; a goal with wait:N takes N ms first; a goal with "fail" fails. */
export class GoalModel implements ModelProvider {
  readonly provider = 'test';
  readonly model = 'goal';
  async *stream(req: ModelRequest): AsyncIterable<ModelStreamPart> {
    const text = JSON.stringify(req.messages);
    const wait = Number(/wait:(\d+)/.exec(text)?.[1] ?? 0);
    if (wait) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        req.signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
    }
    if (/\bfail\b/.test(text)) {
      yield { type: 'error', diagnosis: { code: 'model_failed', severity: 'error', summary: 'the test model fails when asked to', retryable: false } };
      return;
    }
    yield { type: 'text-delta', text: 'ok' };
    yield { type: 'finish', reason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

export const talkPlugin = () => createTextOnlyPlugin({ name: 'talk', inputSchema: z.object({ topic: z.string().optional() }).strict() });

export interface Stack {
  dataDir: string;
  service: RunService;
  triggers: TriggerHost;
  server: RunningServer | null;
  url: string;
  stop(): Promise<void>;
}

/**
 * A RunService with the `talk` agent, triggers over it (config.json's trigger keys as `config`), and
 * with `server` a real loopback server in front. `dataDir`: reuse one (a restart).
 */
export async function startStack(
  o: { dataDir?: string; config?: { webhooks?: unknown; schedules?: unknown }; server?: boolean; host?: Partial<TriggerHostOptions> } = {},
): Promise<Stack> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'runtrail-triggers-'));
  const parsed = triggerConfig(o.config ?? {});
  if (parsed.issues.length) throw new Error(`test config: ${JSON.stringify(parsed.issues)}`);
  const plugin = talkPlugin();
  let url = '';
  const triggers = new TriggerHost({
    dataDir,
    agents: () => ['talk'],
    inputIssues: (_a, input) => {
      const c = checkPluginInput(plugin, input);
      return c.ok ? [] : c.issues.map((i) => ({ path: ['input', ...i.path.map(String)].join('.'), message: i.message }));
    },
    config: () => parsed.config,
    baseUrl: () => url || null,
    refreshMs: 200,
    sweepMs: 500,
    ...o.host,
  });
  const service = new RunService({
    dataDir,
    agents: [plugin],
    env: {},
    providerResolver: () => new GoalModel(),
    observers: [triggers.observer],
    concurrency: 8,
  });
  await service.init();
  await triggers.start(service);
  const server = o.server === false ? null : await startServer({ service, port: 0, dataDir, env: {}, triggers });
  url = server?.url ?? '';
  return {
    dataDir,
    service,
    triggers,
    server,
    url,
    stop: async () => {
      await triggers.stop();
      await server?.close();
      await service.close();
    },
  };
}

export function removeDir(dir: string): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
